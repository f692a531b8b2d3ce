package kubeprint

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/printers"
)

// The describers below follow k8s.io/kubectl pkg/describe (v0.36)
// line for line for the fields a lab's objects have. A lab records no
// events, so Events is <none>, as kubectl shows it for an object without.

// prefixWriter is kubectl's: two spaces per level, control characters
// escaped, into a tabwriter that tabbedString flushes.
type prefixWriter struct{ out io.Writer }

func (pw prefixWriter) write(level int, format string, a ...any) {
	printers.WriteEscaped(pw.out, strings.Repeat("  ", level)+fmt.Sprintf(format, a...))
}

// tabbedString is kubectl's: minwidth 0, tabwidth 8, padding 2.
func tabbedString(f func(w prefixWriter)) string {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	f(prefixWriter{tw})
	tw.Flush()
	return buf.String()
}

// DescribeService is `kubectl describe service`: slices are the
// EndpointSlices labelled kubernetes.io/service-name=<its name>.
func DescribeService(svc *corev1.Service, slices []discoveryv1.EndpointSlice) string {
	return tabbedString(func(w prefixWriter) {
		w.write(0, "Name:\t%s\n", svc.Name)
		w.write(0, "Namespace:\t%s\n", svc.Namespace)
		printLabels(w, "Labels", svc.Labels)
		printAnnotations(w, "Annotations", svc.Annotations)
		w.write(0, "Selector:\t%s\n", labels.FormatLabels(svc.Spec.Selector))
		w.write(0, "Type:\t%s\n", svc.Spec.Type)
		if svc.Spec.IPFamilyPolicy != nil {
			w.write(0, "IP Family Policy:\t%s\n", *svc.Spec.IPFamilyPolicy)
		}
		if len(svc.Spec.IPFamilies) > 0 {
			var fams []string
			for _, f := range svc.Spec.IPFamilies {
				fams = append(fams, string(f))
			}
			w.write(0, "IP Families:\t%s\n", strings.Join(fams, ","))
		} else {
			w.write(0, "IP Families:\t%s\n", "<none>")
		}
		w.write(0, "IP:\t%s\n", svc.Spec.ClusterIP)
		if len(svc.Spec.ClusterIPs) > 0 {
			w.write(0, "IPs:\t%s\n", strings.Join(svc.Spec.ClusterIPs, ","))
		} else {
			w.write(0, "IPs:\t%s\n", "<none>")
		}
		if len(svc.Spec.ExternalIPs) > 0 {
			w.write(0, "External IPs:\t%v\n", strings.Join(svc.Spec.ExternalIPs, ","))
		}
		if svc.Spec.LoadBalancerIP != "" {
			w.write(0, "Desired LoadBalancer IP:\t%s\n", svc.Spec.LoadBalancerIP)
		}
		if svc.Spec.ExternalName != "" {
			w.write(0, "External Name:\t%s\n", svc.Spec.ExternalName)
		}
		if len(svc.Status.LoadBalancer.Ingress) > 0 {
			w.write(0, "LoadBalancer Ingress:\t%s\n", ingressString(svc.Status.LoadBalancer.Ingress))
		}
		for _, sp := range svc.Spec.Ports {
			name := sp.Name
			if name == "" {
				name = "<unset>"
			}
			w.write(0, "Port:\t%s\t%d/%s\n", name, sp.Port, sp.Protocol)
			if sp.TargetPort.Type == intstr.Int {
				w.write(0, "TargetPort:\t%d/%s\n", sp.TargetPort.IntVal, sp.Protocol)
			} else {
				w.write(0, "TargetPort:\t%s/%s\n", sp.TargetPort.StrVal, sp.Protocol)
			}
			if sp.AppProtocol != nil {
				w.write(0, "AppProtocol:\t%s\n", *sp.AppProtocol)
			}
			if sp.NodePort != 0 {
				w.write(0, "NodePort:\t%s\t%d/%s\n", name, sp.NodePort, sp.Protocol)
			}
			w.write(0, "Endpoints:\t%s\n", sliceEndpoints(slices, sp.Name))
		}
		w.write(0, "Session Affinity:\t%s\n", svc.Spec.SessionAffinity)
		if svc.Spec.ExternalTrafficPolicy != "" {
			w.write(0, "External Traffic Policy:\t%s\n", svc.Spec.ExternalTrafficPolicy)
		}
		if svc.Spec.InternalTrafficPolicy != nil {
			w.write(0, "Internal Traffic Policy:\t%s\n", *svc.Spec.InternalTrafficPolicy)
		}
		if svc.Spec.HealthCheckNodePort != 0 {
			w.write(0, "HealthCheck NodePort:\t%d\n", svc.Spec.HealthCheckNodePort)
		}
		if len(svc.Spec.LoadBalancerSourceRanges) > 0 {
			w.write(0, "LoadBalancer Source Ranges:\t%v\n", strings.Join(svc.Spec.LoadBalancerSourceRanges, ","))
		}
		if svc.Spec.TrafficDistribution != nil {
			w.write(0, "Traffic Distribution:\t%s\n", *svc.Spec.TrafficDistribution)
		}
		w.write(0, "Events:\t<none>\n")
	})
}

func ingressString(ingress []corev1.LoadBalancerIngress) string {
	var parts []string
	for _, in := range ingress {
		s := in.Hostname
		if in.IP != "" {
			s = in.IP
			if in.IPMode != nil {
				s += fmt.Sprintf(" (%s)", *in.IPMode)
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// sliceEndpoints is formatEndpointSlices for one port name: the first
// three ready endpoints as IP:port, then " + N more...", or <none>.
func sliceEndpoints(slices []discoveryv1.EndpointSlice, port string) string {
	if len(slices) == 0 {
		return "<none>"
	}
	var list []string
	for _, s := range slices {
		for _, p := range s.Ports {
			if p.Name == nil || *p.Name != port || p.Port == nil {
				continue
			}
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && !*e.Conditions.Ready || len(e.Addresses) == 0 {
					continue
				}
				list = append(list, net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*p.Port))))
			}
		}
	}
	if len(list) > 3 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:3], ","), len(list)-3)
	}
	return strings.Join(list, ",")
}

// DescribePod is `kubectl describe pod`.
func DescribePod(pod *corev1.Pod) string {
	return tabbedString(func(w prefixWriter) {
		w.write(0, "Name:\t%s\n", pod.Name)
		w.write(0, "Namespace:\t%s\n", pod.Namespace)
		if pod.Spec.Priority != nil {
			w.write(0, "Priority:\t%d\n", *pod.Spec.Priority)
		}
		if pod.Spec.PriorityClassName != "" {
			w.write(0, "Priority Class Name:\t%s\n", pod.Spec.PriorityClassName)
		}
		if pod.Spec.ServiceAccountName != "" {
			w.write(0, "Service Account:\t%s\n", pod.Spec.ServiceAccountName)
		}
		if pod.Spec.NodeName == "" {
			w.write(0, "Node:\t<none>\n")
		} else {
			w.write(0, "Node:\t%s\n", pod.Spec.NodeName+"/"+pod.Status.HostIP)
		}
		if pod.Status.StartTime != nil {
			w.write(0, "Start Time:\t%s\n", pod.Status.StartTime.Time.Format(time.RFC1123Z))
		}
		printLabels(w, "Labels", pod.Labels)
		printAnnotations(w, "Annotations", pod.Annotations)
		w.write(0, "Status:\t%s\n", string(pod.Status.Phase))
		if pod.Status.Reason != "" {
			w.write(0, "Reason:\t%s\n", pod.Status.Reason)
		}
		if pod.Status.Message != "" {
			w.write(0, "Message:\t%s\n", pod.Status.Message)
		}
		w.write(0, "IP:\t%s\n", pod.Status.PodIP)
		if len(pod.Status.PodIPs) == 0 {
			w.write(0, "IPs:\t<none>\n")
		} else {
			w.write(0, "IPs:\n")
			for _, ip := range pod.Status.PodIPs {
				w.write(1, "IP:\t%s\n", ip.IP)
			}
		}
		for _, ref := range pod.OwnerReferences {
			if ref.Controller != nil && *ref.Controller {
				w.write(0, "Controlled By:\t%s/%s\n", ref.Kind, ref.Name)
			}
		}
		describeContainers(w, pod)
		if len(pod.Status.Conditions) > 0 {
			w.write(0, "Conditions:\n  Type\tStatus\n")
			for _, c := range pod.Status.Conditions {
				w.write(1, "%v \t%v \n", c.Type, c.Status)
			}
		}
		w.write(0, "Volumes:\t<none>\n")
		w.write(0, "QoS Class:\t%s\n", podQOS(pod))
		printLabels(w, "Node-Selectors", pod.Spec.NodeSelector)
		describeTolerations(w, pod.Spec.Tolerations)
		w.write(0, "Events:\t<none>\n")
	})
}

func describeContainers(w prefixWriter, pod *corev1.Pod) {
	statuses := map[string]corev1.ContainerStatus{}
	for _, s := range pod.Status.ContainerStatuses {
		statuses[s.Name] = s
	}
	none := ""
	if len(pod.Spec.Containers) == 0 {
		none = " <none>"
	}
	w.write(0, "Containers:%s\n", none)
	for _, c := range pod.Spec.Containers {
		st, ok := statuses[c.Name]
		w.write(1, "%v:\n", c.Name)
		if ok {
			w.write(2, "Container ID:\t%s\n", st.ContainerID)
		}
		w.write(2, "Image:\t%s\n", c.Image)
		if ok {
			w.write(2, "Image ID:\t%s\n", st.ImageID)
		}
		ports, hostPorts := containerPorts(c.Ports)
		if strings.Contains(ports, ",") {
			w.write(2, "Ports:\t%s\n", ports)
		} else {
			w.write(2, "Port:\t%s\n", orNone(ports))
		}
		if strings.Contains(hostPorts, ",") {
			w.write(2, "Host Ports:\t%s\n", hostPorts)
		} else {
			w.write(2, "Host Port:\t%s\n", orNone(hostPorts))
		}
		if len(c.Command) > 0 {
			w.write(2, "Command:\n")
			for _, s := range c.Command {
				w.write(3, "%s\n", s)
			}
		}
		if len(c.Args) > 0 {
			w.write(2, "Args:\n")
			for _, s := range c.Args {
				w.write(3, "%s\n", s)
			}
		}
		if ok {
			describeState(w, "State", st.State)
			if st.LastTerminationState.Terminated != nil {
				describeState(w, "Last State", st.LastTerminationState)
			}
			w.write(2, "Ready:\t%v\n", printBool(st.Ready))
			w.write(2, "Restart Count:\t%d\n", st.RestartCount)
		}
		if len(c.Env) == 0 {
			w.write(2, "Environment:\t<none>\n")
		} else {
			w.write(2, "Environment:\n")
			for _, e := range c.Env {
				w.write(3, "%s:\t%s\n", e.Name, e.Value)
			}
		}
		w.write(2, "Mounts:\t<none>\n")
	}
}

func containerPorts(ports []corev1.ContainerPort) (string, string) {
	var cp, hp []string
	for _, p := range ports {
		c, h := fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol), fmt.Sprintf("%d/%s", p.HostPort, p.Protocol)
		if p.Name != "" {
			c, h = fmt.Sprintf("%s (%s)", c, p.Name), fmt.Sprintf("%s (%s)", h, p.Name)
		}
		cp, hp = append(cp, c), append(hp, h)
	}
	return strings.Join(cp, ", "), strings.Join(hp, ", ")
}

func describeState(w prefixWriter, name string, s corev1.ContainerState) {
	switch {
	case s.Running != nil:
		w.write(2, "%s:\tRunning\n", name)
		w.write(3, "Started:\t%v\n", s.Running.StartedAt.Time.Format(time.RFC1123Z))
	case s.Waiting != nil:
		w.write(2, "%s:\tWaiting\n", name)
		if s.Waiting.Reason != "" {
			w.write(3, "Reason:\t%s\n", s.Waiting.Reason)
		}
	case s.Terminated != nil:
		t := s.Terminated
		w.write(2, "%s:\tTerminated\n", name)
		if t.Reason != "" {
			w.write(3, "Reason:\t%s\n", t.Reason)
		}
		if t.Message != "" {
			w.write(3, "Message:\t%s\n", t.Message)
		}
		w.write(3, "Exit Code:\t%d\n", t.ExitCode)
		if t.Signal > 0 {
			w.write(3, "Signal:\t%d\n", t.Signal)
		}
		w.write(3, "Started:\t%s\n", t.StartedAt.Time.Format(time.RFC1123Z))
		w.write(3, "Finished:\t%s\n", t.FinishedAt.Time.Format(time.RFC1123Z))
	default:
		w.write(2, "%s:\tWaiting\n", name)
	}
}

func printBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// podQOS is the pod's status.qosClass, else BestEffort when no container
// asks for resources (the lab's pods), else Burstable: the lab does not
// compute Guaranteed.
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	for _, c := range pod.Spec.Containers {
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			return corev1.PodQOSBurstable
		}
	}
	return corev1.PodQOSBestEffort
}

func describeTolerations(w prefixWriter, tols []corev1.Toleration) {
	w.write(0, "Tolerations:\t")
	if len(tols) == 0 {
		w.write(0, "<none>\n")
		return
	}
	for i, t := range tols {
		if i != 0 {
			w.write(0, "\t")
		}
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		if t.Effect != "" {
			s += ":" + string(t.Effect)
		}
		if t.Operator == corev1.TolerationOpExists && t.Value == "" {
			if t.Key != "" || t.Effect != "" {
				s += " "
			}
			s += "op=Exists"
		}
		if t.TolerationSeconds != nil {
			s += fmt.Sprintf(" for %ds", *t.TolerationSeconds)
		}
		w.write(0, "%s\n", s)
	}
}

// printLabels is printLabelsMultiline: sorted key=value, one a line.
func printLabels(w prefixWriter, title string, m map[string]string) {
	w.write(0, "%s:\t", title)
	if len(m) == 0 {
		w.write(0, "<none>\n")
		return
	}
	keys := sortedKeys(m)
	for i, k := range keys {
		if i != 0 {
			w.write(0, "\t")
		}
		w.write(0, "%s=%s\n", k, m[k])
	}
}

// maxAnnotationLen is kubectl's: longer annotations are shortened.
const maxAnnotationLen = 140

// printAnnotations is printAnnotationsMultiline (last-applied-configuration
// left out, as kubectl does).
func printAnnotations(w prefixWriter, title string, m map[string]string) {
	w.write(0, "%s:\t", title)
	var keys []string
	for _, k := range sortedKeys(m) {
		if k != corev1.LastAppliedConfigAnnotation {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		w.write(0, "<none>\n")
		return
	}
	for i, k := range keys {
		if i != 0 {
			w.write(0, "\t")
		}
		v := strings.TrimSuffix(m[k], "\n")
		if len(v)+len(k)+2 > maxAnnotationLen || strings.Contains(v, "\n") {
			w.write(0, "%s:\n", k)
			for _, s := range strings.Split(v, "\n") {
				if len(s) > maxAnnotationLen-2 {
					s = s[:maxAnnotationLen-2] + "..."
				}
				w.write(0, "\t  %s\n", s)
			}
		} else {
			w.write(0, "%s: %s\n", k, v)
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
