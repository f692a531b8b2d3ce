package kubeprint

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// The row functions below are upstream's (k8s.io/kubernetes
// pkg/printers/internalversion/printers.go, v1.36) on v1 types; the time
// is a parameter instead of time.Now.

// age is translateTimestampSince: "<unknown>" for a zero time.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func podRow(obj runtime.Object, wide bool, now time.Time) []any {
	pod := obj.(*corev1.Pod)
	restarts, ready := 0, 0
	total := len(pod.Spec.Containers)
	var lastRestart metav1.Time
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	hasRunning, errorReason := false, ""
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := pod.Status.ContainerStatuses[i]
		restarts += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
			lastRestart = t.FinishedAt
		}
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			reason = c.State.Waiting.Reason
		case c.State.Terminated != nil:
			switch t := c.State.Terminated; {
			case t.Reason != "":
				reason = t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
			}
			if c.State.Terminated.ExitCode != 0 {
				errorReason = reason
			}
		case c.Ready && c.State.Running != nil:
			hasRunning = true
			ready++
		}
	}
	if reason == "Completed" {
		switch {
		case hasRunning && podReady(pod):
			reason = "Running"
		case errorReason != "":
			reason = errorReason
		case hasRunning:
			reason = "NotReady"
		}
	}
	if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		reason = "Terminating"
	}
	restartsStr := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsStr = fmt.Sprintf("%d (%s ago)", restarts, age(lastRestart, now))
	}
	cells := []any{pod.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartsStr, age(pod.CreationTimestamp, now)}
	if wide {
		ip := "<none>"
		if len(pod.Status.PodIPs) > 0 {
			ip = pod.Status.PodIPs[0].IP
		}
		cells = append(cells, ip, orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), readinessGates(pod))
	}
	return cells
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func readinessGates(pod *corev1.Pod) string {
	if len(pod.Spec.ReadinessGates) == 0 {
		return "<none>"
	}
	n := 0
	for _, g := range pod.Spec.ReadinessGates {
		for _, c := range pod.Status.Conditions {
			if c.Type == g.ConditionType {
				if c.Status == corev1.ConditionTrue {
					n++
				}
				break
			}
		}
	}
	return fmt.Sprintf("%d/%d", n, len(pod.Spec.ReadinessGates))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func serviceRow(obj runtime.Object, wide bool, now time.Time) []any {
	svc := obj.(*corev1.Service)
	clusterIP := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	ports := servicePorts(svc.Spec.Ports)
	if ports == "" {
		ports = "<none>"
	}
	cells := []any{svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc, wide), ports, age(svc.CreationTimestamp, now)}
	if wide {
		cells = append(cells, labels.FormatLabels(svc.Spec.Selector))
	}
	return cells
}

// loadBalancerWidth clips EXTERNAL-IP without -o wide.
const loadBalancerWidth = 16

func loadBalancerIngress(s corev1.LoadBalancerStatus, wide bool) string {
	set := map[string]bool{}
	for _, in := range s.Ingress {
		if in.IP != "" {
			set[in.IP] = true
		} else if in.Hostname != "" {
			set[in.Hostname] = true
		}
	}
	var list []string
	for k := range set {
		list = append(list, k)
	}
	sort.Strings(list)
	r := strings.Join(list, ",")
	if !wide && len(r) > loadBalancerWidth {
		r = r[:loadBalancerWidth-3] + "..."
	}
	return r
}

func serviceExternalIP(svc *corev1.Service, wide bool) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		lb := loadBalancerIngress(svc.Status.LoadBalancer, wide)
		if len(svc.Spec.ExternalIPs) > 0 {
			var all []string
			if lb != "" {
				all = append(all, strings.Split(lb, ",")...)
			}
			return strings.Join(append(all, svc.Spec.ExternalIPs...), ",")
		}
		if lb != "" {
			return lb
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

func endpointSliceRow(obj runtime.Object, _ bool, now time.Time) []any {
	es := obj.(*discoveryv1.EndpointSlice)
	var ports, addrs []string
	for _, p := range es.Ports {
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	for _, e := range es.Endpoints {
		addrs = append(addrs, e.Addresses...)
	}
	return []any{es.Name, string(es.AddressType), listWithMore(ports, 3), listWithMore(addrs, 3), age(es.CreationTimestamp, now)}
}

// listWithMore is listWithMoreString: the first max items, then
// " + N more...", or "<unset>" for none.
func listWithMore(list []string, max int) string {
	if len(list) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ","), len(list)-max)
	}
	if len(list) == 0 {
		return "<unset>"
	}
	return strings.Join(list, ",")
}

func configMapRow(obj runtime.Object, _ bool, now time.Time) []any {
	cm := obj.(*corev1.ConfigMap)
	return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}
}

func namespaceRow(obj runtime.Object, _ bool, now time.Time) []any {
	ns := obj.(*corev1.Namespace)
	return []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}
}

const (
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	nodeLabelRole       = "kubernetes.io/role"
)

func nodeRow(obj runtime.Object, wide bool, now time.Time) []any {
	node := obj.(*corev1.Node)
	var status []string
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			status = append(status, string(c.Type))
		} else {
			status = append(status, "Not"+string(c.Type))
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if node.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	roleSet := map[string]bool{}
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix) && len(k) > len(labelNodeRolePrefix):
			roleSet[strings.TrimPrefix(k, labelNodeRolePrefix)] = true
		case k == nodeLabelRole && v != "":
			roleSet[v] = true
		}
	}
	var roles []string
	for r := range roleSet {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	info := node.Status.NodeInfo
	cells := []any{node.Name, strings.Join(status, ","), orNone(strings.Join(roles, ",")), age(node.CreationTimestamp, now), info.KubeletVersion}
	if wide {
		kernel := orUnknown(info.KernelVersion)
		if info.Architecture != "" {
			kernel += " (" + info.Architecture + ")"
		}
		cells = append(cells, nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
			orUnknown(info.OSImage), kernel, orUnknown(info.ContainerRuntimeVersion))
	}
	return cells
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

func nodeAddress(node *corev1.Node, typ corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == typ {
			return a.Address
		}
	}
	return "<none>"
}

// layoutContainerCells is upstream's: the containers' names and images,
// comma-separated.
func layoutContainerCells(containers []corev1.Container) (names, images string) {
	var n, i []string
	for _, c := range containers {
		n = append(n, c.Name)
		i = append(i, c.Image)
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

// selectorString is a label selector as printDeployment writes it.
func selectorString(s *metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "<invalid>"
	}
	return sel.String()
}

func replicasOf(r *int32) int64 {
	if r == nil {
		return 1
	}
	return int64(*r)
}

func deploymentRow(obj runtime.Object, wide bool, now time.Time) []any {
	d := obj.(*appsv1.Deployment)
	cells := []any{d.Name, fmt.Sprintf("%d/%d", int64(d.Status.ReadyReplicas), replicasOf(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(d.CreationTimestamp, now)}
	if wide {
		names, images := layoutContainerCells(d.Spec.Template.Spec.Containers)
		cells = append(cells, names, images, selectorString(d.Spec.Selector))
	}
	return cells
}

func replicaSetRow(obj runtime.Object, wide bool, now time.Time) []any {
	rs := obj.(*appsv1.ReplicaSet)
	cells := []any{rs.Name, replicasOf(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas), age(rs.CreationTimestamp, now)}
	if wide {
		names, images := layoutContainerCells(rs.Spec.Template.Spec.Containers)
		cells = append(cells, names, images, metav1.FormatLabelSelector(rs.Spec.Selector))
	}
	return cells
}

func statefulSetRow(obj runtime.Object, wide bool, now time.Time) []any {
	ss := obj.(*appsv1.StatefulSet)
	cells := []any{ss.Name, fmt.Sprintf("%d/%d", int64(ss.Status.ReadyReplicas), replicasOf(ss.Spec.Replicas)), age(ss.CreationTimestamp, now)}
	if wide {
		names, images := layoutContainerCells(ss.Spec.Template.Spec.Containers)
		cells = append(cells, names, images)
	}
	return cells
}

func daemonSetRow(obj runtime.Object, wide bool, now time.Time) []any {
	ds := obj.(*appsv1.DaemonSet)
	st := ds.Status
	cells := []any{ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
		int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector), age(ds.CreationTimestamp, now)}
	if wide {
		names, images := layoutContainerCells(ds.Spec.Template.Spec.Containers)
		cells = append(cells, names, images, metav1.FormatLabelSelector(ds.Spec.Selector))
	}
	return cells
}
