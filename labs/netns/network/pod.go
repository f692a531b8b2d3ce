package network

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/nldump"
	"github.com/svclab/svclab/labs/netns/topology"
)

// PodNet says which pod to attach and with what address.
type PodNet struct {
	// Name is the pod's name; its namespace is svclab-<lab>.<Name>, so it
	// may not be the name of a host of the lab or of another pod.
	Name string
	// Namespace is the pod's Kubernetes namespace, "" for "default". Only
	// the Calico attachment uses it, to name the node-side interface.
	Namespace string
	// IP must lie in the node's podCIDR, past its first address (see
	// NextPodIP).
	IP netip.Addr
	// IPs are the pod's addresses, one in each of the node's pod ranges,
	// the primary first (IPs[0] is IP); empty means just IP, which is
	// enough on a single-stack node.
	IPs []netip.Addr
}

// PodPlan is what AttachPod does for one pod.
type PodPlan struct {
	Lab, Node, Pod string
	// KubeNamespace is the pod's Kubernetes namespace.
	KubeNamespace string
	// Namespace is the pod's network namespace, svclab-<lab>.<pod>.
	Namespace string
	// IP is eth0's address: podCIDR-sized with the bridge attachment, a /32
	// with Calico's.
	IP netip.Prefix
	// Gateway is the pod's default gateway.
	Gateway netip.Addr
	// IPs and Gateways are eth0's addresses of every family and the
	// default gateway of each, the primary first (IP and Gateway): an
	// IPv6 address is a /64 with the bridge attachment, a /128 with
	// Calico's.
	IPs      []netip.Prefix
	Gateways []netip.Addr
	// HostVeth is the node-side end of the pod's veth.
	HostVeth string
	MTU      int
	Steps    []Step
}

// hasIPv6 says whether the pod has an IPv6 address.
func (pp *PodPlan) hasIPv6() bool {
	for _, ip := range pp.IPs {
		if ip.Addr().Is6() {
			return true
		}
	}
	return false
}

// Script renders the pod plan as shell commands.
func (pp *PodPlan) Script() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# svclab: attach pod %s to node %s of lab %s\n", pp.Pod, pp.Node, pp.Lab)
	writeSteps(&b, pp.Steps)
	return b.String()
}

// Pod is an attached pod as found in its namespace.
type Pod struct {
	Name, Node string
	// Namespace is the pod's network namespace.
	Namespace string
	IP        netip.Addr
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// dnsSubdomain is a DNS-1123 subdomain: labels joined by dots.
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// Hosts are a lab's hosts planned once (PlanHosts) for the pods that
// attach to it: planning them validates the lab and lays out every node,
// work in proportion to the lab that a change of a thousand pods need not
// do a thousand times. Hosts is read-only: pods attach side by side.
type Hosts struct {
	lab  *topology.Lab
	plan *Plan
}

// PlanHosts plans lab's hosts. It is pure.
func PlanHosts(lab *topology.Lab) (*Hosts, error) {
	plan, err := planHosts(lab)
	if err != nil {
		return nil, err
	}
	return &Hosts{lab: lab, plan: plan}, nil
}

// PlanPod plans attaching pod to node of lab. It is pure.
func PlanPod(lab *topology.Lab, node string, pod PodNet) (*PodPlan, error) {
	hs, err := PlanHosts(lab)
	if err != nil {
		return nil, err
	}
	return hs.PlanPod(node, pod)
}

// PlanPod plans attaching pod to node of the lab. It is pure.
func (hs *Hosts) PlanPod(node string, pod PodNet) (*PodPlan, error) {
	lab, plan := hs.lab, hs.plan
	errf := func(format string, args ...any) error {
		return fmt.Errorf("plan pod %q on node %q of lab %q: %s", pod.Name, node, lab.Name(), fmt.Sprintf(format, args...))
	}
	h, ok := plan.Host(node)
	if !ok || h.Node == nil {
		return nil, errf("no such node (nodes: %s)", strings.Join(nodeNames(lab), ", "))
	}
	switch {
	case !dnsSubdomain.MatchString(pod.Name) || len(pod.Name) > 253:
		// Pod names are DNS-1123 subdomains, as the API server wants them
		// (seed 004's pod is httpserver-v2.0.0-rc.3-patch1-zvcbp).
		return nil, errf("pod name is not a DNS subdomain")
	case pod.Name == topology.RouterName:
		return nil, errf("pod name %q is reserved for the router", pod.Name)
	}
	if _, clash := plan.Host(pod.Name); clash {
		return nil, errf("pod name %q is already the name of a host of the lab", pod.Name)
	}
	kubeNS := pod.Namespace
	if kubeNS == "" {
		kubeNS = "default"
	}
	if !dnsLabel.MatchString(kubeNS) {
		return nil, errf("Kubernetes namespace %q is not a DNS label", kubeNS)
	}
	att, _, err := parts(lab.Spec.CNI)
	if err != nil {
		return nil, errf("%v", err)
	}
	ips := pod.IPs
	if len(ips) == 0 {
		ips = []netip.Addr{pod.IP}
	}
	if len(ips) != len(h.Node.PodCIDRs) {
		return nil, errf("%d pod IPs for a node with %d pod ranges %v: want one in each", len(ips), len(h.Node.PodCIDRs), h.Node.PodCIDRs)
	}
	pp := &PodPlan{
		Lab:           lab.Name(),
		Node:          node,
		Pod:           pod.Name,
		KubeNamespace: kubeNS,
		Namespace:     NamespaceName(lab.Name(), pod.Name),
		HostVeth:      att.hostVeth(kubeNS, pod.Name),
		MTU:           h.Node.PodMTU,
	}
	for i, ip := range ips {
		if err := checkPodIP(att, h, h.Node.PodCIDRs[i], ip); err != "" {
			return nil, errf("%s", err)
		}
		pp.IPs = append(pp.IPs, att.podPrefix(h, ip))
		pp.Gateways = append(pp.Gateways, h.Node.PodGateways[i])
	}
	pp.IP, pp.Gateway = pp.IPs[0], pp.Gateways[0]
	pp.Steps = append(nsSteps(pp.Namespace, tag{Lab: lab.Name(), Role: "pod", Node: node}), att.podSteps(h, pp)...)
	return pp, nil
}

// checkPodIP says what is wrong with ip as a pod's address in the node's
// pod range cidr, or "".
func checkPodIP(att attachment, h *Host, cidr netip.Prefix, ip netip.Addr) string {
	switch {
	case !ip.IsValid():
		return "no pod IP given (see NextPodIP)"
	case ip.Is4() != cidr.Addr().Is4() || ip.Is4In6() || !cidr.Contains(ip):
		return fmt.Sprintf("pod IP %s is not in the node's podCIDR %s", ip, cidr)
	case ip == cidr.Addr():
		return fmt.Sprintf("pod IP %s is the podCIDR's network address (the node's VTEP address)", ip)
	case ip == lastAddr(cidr) && ip.Is4():
		return fmt.Sprintf("pod IP %s is the podCIDR's broadcast address", ip)
	case att.reserved(h, ip):
		return fmt.Sprintf("pod IP %s is reserved for the node (the pods' gateway)", ip)
	}
	return ""
}

func nodeNames(lab *topology.Lab) []string {
	var names []string
	for _, n := range lab.Spec.Nodes {
		names = append(names, n.Name)
	}
	return names
}

// NextPodIP is the first address of podCIDR that a pod may get and that is
// not in used, counting from the third address (.2 in a /24) as host-local
// IPAM does when the gateway is .1.
func NextPodIP(podCIDR netip.Prefix, used []netip.Addr) (netip.Addr, error) {
	if !podCIDR.IsValid() || podCIDR.Bits() > podCIDR.Addr().BitLen()-2 {
		return netip.Addr{}, fmt.Errorf("NextPodIP: podCIDR %s is not a prefix of /30 (IPv4) or /126 (IPv6) or larger", podCIDR)
	}
	last := lastAddr(podCIDR)
	for a := nthAddr(podCIDR, 2); a.Less(last); a = a.Next() {
		if !slices.Contains(used, a) {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("NextPodIP: podCIDR %s is full", podCIDR)
}

// AttachPod creates the pod's namespace and plugs it into node as the
// lab's CNI would. The lab must be built. It is all-or-nothing: on failure
// nothing of the pod remains. The pod's address is the caller's to keep
// unique, as a CNI plugin leaves it to its IPAM (the lab's store hands out
// each address once, workload's NextPodIP): AttachPod looks at no other
// pod, so attaching one costs the same in a lab of a thousand pods as in
// a lab of one, and pods attach in parallel.
func AttachPod(lab *topology.Lab, node string, pod PodNet) (*PodPlan, error) {
	hs, err := PlanHosts(lab)
	if err != nil {
		return nil, err
	}
	return hs.AttachPod(node, pod)
}

// AttachPod is AttachPod of the lab whose hosts hs are.
func (hs *Hosts) AttachPod(node string, pod PodNet) (*PodPlan, error) {
	lab := hs.lab
	pp, err := hs.PlanPod(node, pod)
	if err != nil {
		return nil, err
	}
	errf := func(format string, args ...any) error {
		return fmt.Errorf("attach pod %q to node %q of lab %q: %s", pod.Name, node, lab.Name(), fmt.Sprintf(format, args...))
	}
	if nodeNS := NamespaceName(lab.Name(), node); !namespaceExists(nodeNS) {
		return nil, errf("the lab is not built (no namespace %s)", nodeNS)
	}
	if namespaceExists(pp.Namespace) {
		return nil, errf("namespace %s already exists (a pod of that name is attached; DetachPod it first)", pp.Namespace)
	}
	x := newExecutor()
	if err := x.run(pp.Steps); err != nil {
		// Delete the veth pair first: that is synchronous, whereas the
		// node-side end would otherwise linger until the kernel gets round
		// to cleaning up the deleted namespace.
		deletePodLink(pp.Namespace)
		if uerr := x.undo(); uerr != nil {
			return nil, fmt.Errorf("attach pod %q: %w (and %v)", pod.Name, err, uerr)
		}
		return nil, fmt.Errorf("attach pod %q to node %q of lab %q: %w", pod.Name, node, lab.Name(), err)
	}
	x.close()
	return pp, nil
}

// DetachPod removes a pod's namespace and, with it, its veth pair and the
// node's route to it. A pod that is not there is not an error.
func DetachPod(labName, pod string) error {
	ns := NamespaceName(labName, pod)
	if !namespaceExists(ns) {
		return nil
	}
	if t, ok := readTag(ns); ok && (t.Lab != labName || t.Role != "pod") {
		return fmt.Errorf("detach pod %q of lab %q: namespace %s is a %s of lab %q, not a pod", pod, labName, ns, t.Role, t.Lab)
	}
	deletePodLink(ns)
	return deleteNamedNetns(ns)
}

// deletePodLink deletes eth0 in a pod namespace, if any; deleting one end
// of a veth pair deletes both ends at once.
func deletePodLink(ns string) {
	h, err := netns.GetFromPath(netnsPath(ns))
	if err != nil {
		return
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		return
	}
	defer nl.Close()
	if l, err := nl.LinkByName("eth0"); err == nil {
		_ = nl.LinkDel(l)
	}
}

// Pods lists the pods attached in a lab, from their namespaces.
func Pods(labName string) ([]Pod, error) {
	names, err := Namespaces(labName)
	if err != nil {
		return nil, err
	}
	var pods []Pod
	for _, ns := range names {
		t, ok := readTag(ns)
		if !ok || t.Role != "pod" {
			continue
		}
		lab, name, ok := SplitNamespaceName(ns)
		if !ok || lab != labName {
			continue // a namespace of the older scheme, found only to be deleted
		}
		pod := Pod{Name: name, Node: t.Node, Namespace: ns}
		pod.IP, _ = eth0Addr(ns)
		pods = append(pods, pod)
	}
	return pods, nil
}

// eth0Addr reads the first IPv4 address of eth0 in a namespace, or its
// first global IPv6 one when it has no IPv4 address (a pod of an ipv6
// lab).
func eth0Addr(ns string) (netip.Addr, error) {
	h, err := netns.GetFromPath(netnsPath(ns))
	if err != nil {
		return netip.Addr{}, err
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		return netip.Addr{}, err
	}
	defer nl.Close()
	l, err := nl.LinkByName("eth0")
	if err != nil {
		return netip.Addr{}, err
	}
	for _, family := range []int{unix.AF_INET, unix.AF_INET6} {
		addrs, err := nldump.Retry(func() ([]netlink.Addr, error) { return nl.AddrList(l, family) })
		if err != nil {
			return netip.Addr{}, err
		}
		for _, a := range addrs {
			if ip, ok := netip.AddrFromSlice(a.IP); ok && ip.Unmap().IsGlobalUnicast() {
				return ip.Unmap(), nil
			}
		}
	}
	return netip.Addr{}, fmt.Errorf("no IPv4 or global IPv6 address on eth0 in %s", ns)
}
