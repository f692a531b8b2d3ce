package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/svclab/svclab/internal/labstore"
)

// applyPod places a pod (a bare Pod manifest, or one made for a Deployment)
// and gives it an IP. A pod that exists keeps its node and IP.
func (c Cluster) applyPod(st *labstore.State, pod *corev1.Pod, source string) error {
	defaultNamespace(&pod.ObjectMeta)
	if err := checkMeta(source, "Pod", pod.ObjectMeta); err != nil {
		return err
	}
	if slices.Contains(c.ReservedHostNames, pod.Name) {
		return errorf(source, "Pod %s/%s: metadata.name %q: taken by a node or client of the lab", pod.Namespace, pod.Name, pod.Name)
	}
	if other := st.Pod(pod.Name); other != nil && other.Namespace != pod.Namespace {
		return errorf(source, "Pod %s/%s: metadata.name %q: a pod of that name runs in namespace %s (pod names are host names in a lab and must be unique)", pod.Namespace, pod.Name, pod.Name, other.Namespace)
	}
	if err := checkContainerPorts(source, pod); err != nil {
		return err
	}
	// As the API server: spec.hostname and spec.subdomain are DNS labels
	// (they become names in cluster DNS).
	for _, f := range []struct{ field, value string }{{"spec.hostname", pod.Spec.Hostname}, {"spec.subdomain", pod.Spec.Subdomain}} {
		if f.value == "" {
			continue
		}
		if msgs := validation.IsDNS1123Label(f.value); len(msgs) > 0 {
			return errorf(source, "Pod %s/%s: %s: Invalid value: %q: %s", pod.Namespace, pod.Name, f.field, f.value, msgs[0])
		}
	}
	if w, ok := pod.Annotations[WeightAnnotation]; ok {
		if n, err := strconv.Atoi(w); err != nil || n < 1 || n > 65535 {
			return errorf(source, "Pod %s/%s: metadata.annotations[%s] %q: want a weight from 1 to 65535", pod.Namespace, pod.Name, WeightAnnotation, w)
		}
	}
	if old := st.Pod(pod.Name); old != nil {
		if pod.Spec.NodeName != "" && pod.Spec.NodeName != old.Spec.NodeName {
			return errorf(source, "Pod %s/%s: spec.nodeName %q: a pod cannot move; it runs on %s", pod.Namespace, pod.Name, pod.Spec.NodeName, old.Spec.NodeName)
		}
		pod.Spec.NodeName = old.Spec.NodeName
		pod.Status = old.Status
		// A pod being deleted stays so: an apply cannot bring it back.
		pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = old.DeletionTimestamp, old.DeletionGracePeriodSeconds
		st.Pods = replaceOrAdd(st.Pods, pod, sameName[*corev1.Pod](pod.ObjectMeta))
		return nil
	}
	node, err := c.schedule(st, pod, source)
	if err != nil {
		return err
	}
	ips, err := podIPs(pod, node, st.Pods, c.leaving, source)
	if err != nil {
		return err
	}
	pod.Spec.NodeName = node.Name
	pod.Status = corev1.PodStatus{
		Phase:  corev1.PodRunning,
		PodIP:  ips[0].IP,
		PodIPs: ips,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		},
	}
	st.Pods = append(st.Pods, pod)
	return nil
}

// schedule picks the pod's node: spec.nodeName when given, else among the
// nodes whose labels match the pod's nodeSelector (kubernetes.io/hostname,
// kubernetes.io/os, kubernetes.io/arch) the one with the fewest pods (ties
// broken by the topology's order) — enough to spread replicas. A pod no
// node fits is refused (a scheduler would leave it Pending).
func (c Cluster) schedule(st *labstore.State, pod *corev1.Pod, source string) (Node, error) {
	want, field := pod.Spec.NodeName, "spec.nodeName"
	if want == "" {
		want, field = pod.Spec.NodeSelector[corev1.LabelHostname], "spec.nodeSelector[kubernetes.io/hostname]"
	}
	if want != "" {
		if _, ok := c.node(want); !ok {
			return Node{}, errorf(source, "Pod %s/%s: %s %q: no such node (have %s)", pod.Namespace, pod.Name, field, want, strings.Join(c.nodeNames(), ", "))
		}
	}
	if len(c.Nodes) == 0 {
		return Node{}, errorf(source, "Pod %s/%s: the lab has no nodes", pod.Namespace, pod.Name)
	}
	if pod.Spec.NodeName != "" {
		n, _ := c.node(pod.Spec.NodeName)
		return n, nil
	}
	sel := labels.SelectorFromSet(pod.Spec.NodeSelector)
	var fit []Node
	for _, n := range c.Nodes {
		if sel.Matches(n.Labels()) {
			fit = append(fit, n)
		}
	}
	if len(fit) == 0 {
		return Node{}, errorf(source, "Pod %s/%s: spec.nodeSelector %v: 0/%d nodes are available: %d node(s) didn't match Pod's node affinity/selector", pod.Namespace, pod.Name, pod.Spec.NodeSelector, len(c.Nodes), len(c.Nodes))
	}
	// Spread the lab's workloads; the system pods (kube-system: the
	// cluster DNS) do not count, so a lab places its pods as it did before
	// it had them.
	count := map[string]int{}
	for _, p := range st.Pods {
		if p.Namespace != "kube-system" {
			count[p.Spec.NodeName]++
		}
	}
	best := fit[0]
	for _, n := range fit[1:] {
		if count[n.Name] < count[best.Name] {
			best = n
		}
	}
	return best, nil
}

func (c Cluster) nodeNames() []string {
	var names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	return names
}

func checkContainerPorts(source string, pod *corev1.Pod) error {
	seen := map[string]string{}
	names := map[string]string{}
	for ci, ctr := range pod.Spec.Containers {
		for pi, p := range ctr.Ports {
			field := fmt.Sprintf("spec.containers[%d].ports[%d]", ci, pi)
			if p.ContainerPort < 1 || p.ContainerPort > 65535 {
				return errorf(source, "Pod %s/%s: %s.containerPort %d: must be 1-65535", pod.Namespace, pod.Name, field, p.ContainerPort)
			}
			if p.Name != "" {
				// As the API server: an IANA_SVC_NAME, unique in the pod.
				if msgs := validation.IsValidPortName(p.Name); len(msgs) > 0 {
					return errorf(source, "Pod %s/%s: %s.name: Invalid value: %q: %s", pod.Namespace, pod.Name, field, p.Name, msgs[0])
				}
				if prev, dup := names[p.Name]; dup {
					return errorf(source, "Pod %s/%s: %s.name: Duplicate value: %q (already the name of %s)", pod.Namespace, pod.Name, field, p.Name, prev)
				}
				names[p.Name] = field
			}
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			if proto != corev1.ProtocolTCP && proto != corev1.ProtocolUDP && proto != corev1.ProtocolSCTP {
				return errorf(source, "Pod %s/%s: %s.protocol: Unsupported value: %q: supported values: \"SCTP\", \"TCP\", \"UDP\"", pod.Namespace, pod.Name, field, p.Protocol)
			}
			key := fmt.Sprintf("%s/%d", proto, p.ContainerPort)
			if prev, dup := seen[key]; dup {
				return errorf(source, "Pod %s/%s: %s.containerPort %d: port clash with %s", pod.Namespace, pod.Name, field, p.ContainerPort, prev)
			}
			seen[key] = field
		}
	}
	return nil
}

func ownerRef(kind string, owner metav1.ObjectMeta) metav1.OwnerReference {
	ctrl := true
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: owner.Name, UID: owner.UID, Controller: &ctrl}
}
