package netns

import (
	"bufio"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/buildinfo"
	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
)

// The lab as an API server would serve it (`svclab get`, `describe`): the
// store's objects, with the status a kubelet and the node controller would
// write filled from what the lab's supervisors report and the kernel shows.

// PodObjects returns the lab's pods — the node proxies as
// kube-system/kube-proxy-<node> (labelled k8s-app=kube-proxy, host
// network), the store's pods, and pods a pending change is making — each
// with its status: phase, pod and host IPs, conditions and container
// statuses from its supervisor's report. objs is the store's objects (nil:
// read them).
func (l *Lab) PodObjects(objs *labstore.State) ([]*corev1.Pod, error) {
	if objs == nil {
		var err error
		if objs, _, err = l.Store.ReadObjects(); err != nil {
			return nil, err
		}
	}
	var pods []*corev1.Pod
	for _, n := range l.Topology.Spec.Nodes {
		ip := n.IP.Addr().String()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: proxyNamespace, Name: proxyPodName(n.Name), Labels: map[string]string{"k8s-app": "kube-proxy"}},
			Spec: corev1.PodSpec{NodeName: n.Name, HostNetwork: true, Containers: []corev1.Container{{
				Name: "kube-proxy", Command: []string{"svclab", "proxy", "--node=" + n.Name},
			}}},
			Status: corev1.PodStatus{PodIP: ip},
		}
		for _, h := range l.nodeHostIPs(n.Name) {
			p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP(h)) // host network: the node's addresses
		}
		if err := l.fillPodStatus(p, true); err != nil {
			return nil, err
		}
		pods = append(pods, p)
	}
	listed := map[string]bool{}
	for _, stored := range objs.Pods {
		p := stored.DeepCopy()
		listed[p.Name] = true
		if err := l.fillPodStatus(p, len(serverPorts(p)) > 0); err != nil {
			return nil, err
		}
		pods = append(pods, p)
	}
	_, making, _, err := l.Pending()
	if err != nil {
		return nil, err
	}
	for _, m := range making {
		if !listed[m.Name] {
			p := m.DeepCopy()
			p.Status = corev1.PodStatus{Phase: corev1.PodPending, PodIP: m.Status.PodIP}
			if len(m.Status.PodIPs) > 1 {
				p.Status.PodIPs = m.Status.PodIPs // a dual-stack pod's pair
			}
			setContainers(p, corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}})
			pods = append(pods, p)
		}
	}
	for _, p := range pods {
		p.APIVersion, p.Kind = "v1", "Pod"
	}
	return pods, nil
}

// NetworkNamespaceMissing is the reason a node is NotReady, and a pod that
// runs no process is not Running, when the kernel has no network namespace
// for it (deleted behind the lab's back).
const NetworkNamespaceMissing = "NetworkNamespaceMissing"

// missingPodNamespace says why a pod that runs no process is not running
// ("" when it is): such a pod is its network namespace and nothing else.
func (l *Lab) missingPodNamespace(pod string) string {
	if network.HostNamespaceExists(l.Name(), pod) {
		return ""
	}
	return "the kernel has no network namespace " + network.NamespaceName(l.Name(), pod)
}

// fillPodStatus writes p's status from its supervisor's report; a pod
// that runs no process (no containerPorts) is Running with nothing to
// restart while the kernel has its network namespace, and Unknown when not.
func (l *Lab) fillPodStatus(p *corev1.Pod, supervised bool) error {
	ip := p.Status.PodIP
	st := corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, HostIP: l.nodeIP(p.Spec.NodeName), QOSClass: corev1.PodQOSBestEffort}
	if ip != "" {
		// A dual-stack pod keeps both its addresses, primary first.
		st.PodIPs = p.Status.PodIPs
		if len(st.PodIPs) == 0 {
			st.PodIPs = []corev1.PodIP{{IP: ip}}
		}
	}
	if st.HostIP != "" {
		st.HostIPs = l.nodeHostIPs(p.Spec.NodeName)
	}
	cs := corev1.ContainerStatus{}
	ready := false
	if !supervised {
		if missing := l.missingPodNamespace(p.Name); missing != "" {
			st.Phase = corev1.PodUnknown
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: NetworkNamespaceMissing, Message: missing}
		} else {
			ready = true
			cs.State.Running = &corev1.ContainerStateRunning{}
		}
	} else {
		ps, err := l.podState(p.Name)
		if err != nil {
			return err
		}
		cs.RestartCount = int32(ps.Restarts)
		if !ps.CreatedAt.IsZero() {
			p.CreationTimestamp = metav1.NewTime(ps.CreatedAt)
			st.StartTime = &p.CreationTimestamp
		}
		if t := ps.LastTermination; t != nil {
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
				ExitCode: int32(t.ExitCode), Reason: t.Reason, Message: t.Message, FinishedAt: metav1.NewTime(t.FinishedAt),
			}
		}
		switch {
		case ps.SupervisorGone:
			st.Phase = corev1.PodUnknown
		case !ps.Found:
			st.Phase = corev1.PodPending
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		case ps.running():
			ready = true
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(ps.StartedAt)}
		case ps.State == labstore.StateWaiting:
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: ps.Reason, Message: ps.failure()}
		default:
			term := &corev1.ContainerStateTerminated{Reason: ps.Reason}
			if t := ps.LastTermination; t != nil {
				term.ExitCode, term.FinishedAt = int32(t.ExitCode), metav1.NewTime(t.FinishedAt)
			}
			cs.State.Terminated = term
		}
	}
	cs.Ready, cs.Started = ready, &ready
	st.Conditions = podConditions(ready, st.Phase != corev1.PodPending || p.Spec.NodeName != "")
	p.Status = st
	setContainers(p, cs)
	return nil
}

// setContainers gives every container of p the status cs: a lab pod's
// one process serves all its containers' ports.
func setContainers(p *corev1.Pod, cs corev1.ContainerStatus) {
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		s := *cs.DeepCopy()
		s.Name, s.Image = c.Name, c.Image
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, s)
	}
}

func podConditions(ready, scheduled bool) []corev1.PodCondition {
	b := func(v bool) corev1.ConditionStatus {
		if v {
			return corev1.ConditionTrue
		}
		return corev1.ConditionFalse
	}
	return []corev1.PodCondition{
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: b(ready)},
		{Type: corev1.ContainersReady, Status: b(ready)},
		{Type: corev1.PodScheduled, Status: b(scheduled)},
	}
}

// nodeHostIPs are a node's addresses as a pod's status.hostIPs, one per
// family, the primary first.
func (l *Lab) nodeHostIPs(node string) []corev1.HostIP {
	n, _ := l.Topology.Node(node)
	ips := n.IPs
	if len(ips) == 0 {
		ips = []netip.Prefix{n.IP}
	}
	out := make([]corev1.HostIP, len(ips))
	for i, ip := range ips {
		out[i] = corev1.HostIP{IP: ip.Addr().String()}
	}
	return out
}

func (l *Lab) nodeIP(node string) string {
	for _, n := range l.Topology.Spec.Nodes {
		if n.Name == node {
			return n.IP.Addr().String()
		}
	}
	return ""
}

// Created is when the lab was created (its lab file in the store was
// written then and never again).
func (l *Lab) Created() time.Time {
	fi, err := os.Stat(l.Store.Path("lab.yaml"))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// NodeObjects returns the lab's nodes as Node objects: Ready when the
// kernel has the node's network namespace (NotReady, reason
// NetworkNamespaceMissing, when not), the node's IP as InternalIP, its
// pod CIDR, and in nodeInfo the host's kernel and OS (every lab node
// shares them) and the Kubernetes version whose API svclab speaks.
func (l *Lab) NodeObjects() ([]*corev1.Node, error) {
	have, err := network.Namespaces(l.Name())
	if err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	for _, ns := range have {
		exists[ns] = true
	}
	created := metav1.NewTime(l.Created())
	info := corev1.NodeSystemInfo{
		KubeletVersion: buildinfo.Follows, OSImage: osImage(), KernelVersion: kernelVersion(),
		OperatingSystem: runtime.GOOS, Architecture: runtime.GOARCH,
	}
	var nodes []*corev1.Node
	for _, n := range l.Topology.Spec.Nodes {
		ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "NetworkNamespaceReady",
			Message: "the node's network namespace " + network.NamespaceName(l.Name(), n.Name) + " exists"}
		if !exists[network.NamespaceName(l.Name(), n.Name)] {
			ready.Status, ready.Reason = corev1.ConditionFalse, NetworkNamespaceMissing
			ready.Message = "the kernel has no network namespace " + network.NamespaceName(l.Name(), n.Name)
		}
		nodes = append(nodes, &corev1.Node{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, CreationTimestamp: created, Labels: map[string]string{
				"kubernetes.io/hostname": n.Name, "kubernetes.io/os": runtime.GOOS, "kubernetes.io/arch": runtime.GOARCH,
			}},
			Spec: corev1.NodeSpec{PodCIDR: n.PodCIDR.String(), PodCIDRs: nodePodCIDRs(n)},
			Status: corev1.NodeStatus{
				Conditions: []corev1.NodeCondition{ready},
				Addresses:  nodeAddresses(n),
				NodeInfo:   info,
			},
		})
	}
	return nodes, nil
}

// osImage is the host's PRETTY_NAME from /etc/os-release ("" if none).
func osImage() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// kernelVersion is uname -r.
func kernelVersion() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// nodePodCIDRs is a Node's spec.podCIDRs: one range per family, the
// primary first, as kube-controller-manager allocates them.
func nodePodCIDRs(n topology.Node) []string {
	cidrs := n.PodCIDRs
	if len(cidrs) == 0 {
		cidrs = []netip.Prefix{n.PodCIDR}
	}
	out := make([]string, len(cidrs))
	for i, c := range cidrs {
		out[i] = c.String()
	}
	return out
}

// nodeAddresses is a Node's status.addresses: an InternalIP per family,
// the primary first (as a dual-stack kubelet reports its --node-ip
// pair), then its hostname.
func nodeAddresses(n topology.Node) []corev1.NodeAddress {
	ips := n.IPs
	if len(ips) == 0 {
		ips = []netip.Prefix{n.IP}
	}
	var out []corev1.NodeAddress
	for _, ip := range ips {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.Addr().String()})
	}
	return append(out, corev1.NodeAddress{Type: corev1.NodeHostName, Address: n.Name})
}
