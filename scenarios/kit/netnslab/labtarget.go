package netnslab

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/scenarios/kit"
)

// LabTarget runs the conformance scenarios on svclab's netns labs: each
// workspace is a lab of its own (one node, or seed 004's two), with a
// client outside the cluster behind the lab's edge router, and the
// embedded proxy in iptables mode.
type LabTarget struct {
	Binary string // the svclab executable the labs run
	CNI    string // flannel-vxlan (default), calico-proxyarp or canal
	// IPFamily is the labs' spec.ipFamily: "" (IPv4, the labs as they
	// always were), dual or ipv6 (the IPv6 addresses, subnets and pod
	// ranges derived from the IPv4 ones the lab file writes, as an ipv6
	// lab file may; an ipv6 lab has no load balancer pool, the lab's pool
	// being IPv4, so its LoadBalancer Services stay pending).
	IPFamily topology.IPFamily

	proxyFacts labProxyFacts // what Proxy found (labproxy.go)
}

// labTopology is a lab of one or two nodes ({{NODES}}) on a /20, a
// client on its own LAN and a load balancer pool (LoadBalancer Services
// get addresses, as on a cluster with MetalLB); {{NAME}} and {{CNI}} are
// filled in.
const labTopology = `
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: "{{NAME}}"}
spec:
  cni: {{CNI}}{{FAMILY}}
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  proxy: {mode: iptables}
{{POOL}}  nodes:
{{NODES}}
  clients:
  - {name: client, ip: 192.168.55.230/24}
`

var labNodes = []string{
	"  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}",
	"  - {name: node2, ip: 192.168.16.139/20, podCIDR: 10.244.2.0/24}",
}

func (t *LabTarget) Backend() string { return "netns" }

func (t *LabTarget) Workspace(ctx context.Context, prefix string, nodes int, family corev1.IPFamily) (kit.Workspace, error) {
	if nodes > len(labNodes) {
		return nil, kit.ErrTooFewNodes
	}
	if t.IPFamily != "" && !slices.Contains(topology.IPFamilies(), t.IPFamily) {
		return nil, fmt.Errorf("the conformance suite's netns labs are ipv4, ipv6 or dual, not %s", t.IPFamily)
	}
	if !slices.Contains(t.families(), kit.FamilyOrIPv4(family)) {
		return nil, fmt.Errorf("netns labs of ipFamily %q have no %s", t.IPFamily, family)
	}
	lab, err := NewLab(ctx, roottest.UniqueName(prefix), t.topology(nodes), t.Binary)
	if err != nil {
		return nil, err
	}
	return kit.InFamily(&labWorkspace{lab: lab, family: family}, family), nil
}

// Families are the IP families of the labs: IPFamily's, the primary
// first.
func (t *LabTarget) Families(context.Context) ([]corev1.IPFamily, error) { return t.families(), nil }

// families are the labs' IP families: IPv4, and IPv6 in dual-stack labs.
func (t *LabTarget) families() []corev1.IPFamily {
	switch t.IPFamily {
	case topology.IPFamilyDual:
		return []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	case topology.IPFamilyIPv6:
		return []corev1.IPFamily{corev1.IPv6Protocol}
	}
	return []corev1.IPFamily{corev1.IPv4Protocol}
}

// familyLine is the topology's spec.ipFamily line ("" for IPv4: the
// lab file stays as it was).
func (t *LabTarget) familyLine() string {
	if t.IPFamily == "" || t.IPFamily == topology.IPFamilyIPv4 {
		return ""
	}
	return "\n  ipFamily: " + string(t.IPFamily)
}

// topology is the lab topology of a workspace of the given number of
// nodes.
func (t *LabTarget) topology(nodes int) string {
	cni := t.CNI
	if cni == "" {
		cni = "flannel-vxlan"
	}
	pool := "  loadBalancer: {pool: 192.168.100.10-192.168.100.20}\n"
	if t.IPFamily == topology.IPFamilyIPv6 {
		pool = ""
	}
	return strings.NewReplacer("{{CNI}}", cni, "{{FAMILY}}", t.familyLine(), "{{POOL}}", pool, "{{NODES}}", strings.Join(labNodes[:max(nodes, 1)], "\n")).Replace(labTopology)
}

func (t *LabTarget) Close(context.Context) error { return nil }

// labWorkspace is a Workspace on one lab.
type labWorkspace struct {
	lab *Lab
	// family is the IP family whose evidence the workspace reads ("" is
	// IPv4).
	family corev1.IPFamily
}

func (w *labWorkspace) Name() string                              { return w.lab.Name() }
func (w *labWorkspace) Delete(context.Context) error              { return w.lab.Delete() }
func (w *labWorkspace) Apply(ctx context.Context, m string) error { return w.lab.Apply(ctx, m) }

func (w *labWorkspace) Service(_ context.Context, name string) (*corev1.Service, error) {
	objs, _, err := w.lab.Store.ReadObjects()
	if err != nil {
		return nil, err
	}
	svc := objs.Service("default", name)
	if svc == nil {
		return nil, fmt.Errorf("lab %s: no Service default/%s", w.lab.Name(), name)
	}
	return svc, nil
}

func (w *labWorkspace) Pods(_ context.Context, app string) ([]corev1.Pod, error) {
	objs, _, err := w.lab.Store.ReadObjects()
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range objs.Pods {
		if p.Labels["app"] == app {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (w *labWorkspace) Nodes(context.Context) ([]kit.Node, error) {
	var out []kit.Node
	for _, n := range w.lab.Topology.Spec.Nodes {
		node := kit.Node{Name: n.Name, IP: n.IP.Addr(), PodCIDR: n.PodCIDR, PodCIDRs: n.PodCIDRs}
		for _, ip := range n.IPs {
			node.IPs = append(node.IPs, ip.Addr())
		}
		out = append(out, node)
	}
	return out, nil
}

// Traffic runs from the pod's own namespace, or from the lab's client
// (outside the cluster, routed through the edge router to the node).
func (w *labWorkspace) Traffic(_ context.Context, from kit.Client, target netip.AddrPort, n int) (*traffic.Result, error) {
	host := from.Pod
	if host == "" {
		host = "client"
	}
	return w.lab.Traffic(host, target.String(), n)
}

func (w *labWorkspace) IPTablesSave(_ context.Context, node, table string, counters bool) (string, error) {
	return w.lab.IPTablesSave(node, table, counters, w.family)
}

func (w *labWorkspace) NFTables(_ context.Context, node string) (string, error) {
	return w.lab.Run(node, "nft", "-j", "list", "table", kit.NFTFamily(w.family), "kube-proxy")
}

// Conntrack: the node's entries of the workspace's family.
func (w *labWorkspace) Conntrack(_ context.Context, node string) ([]conntrack.Flow, error) {
	flows, err := w.lab.Conntrack(node)
	return kit.FlowsOfFamily(flows, w.family), err
}

func (w *labWorkspace) RouteSource(_ context.Context, node string, dst netip.Addr) (netip.Addr, error) {
	name, err := w.lab.Namespace(node)
	if err != nil {
		return netip.Addr{}, err
	}
	ns, err := netns.GetFromName(name)
	if err != nil {
		return netip.Addr{}, err
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return netip.Addr{}, err
	}
	defer h.Close()
	routes, err := h.RouteGet(dst.AsSlice())
	if err != nil || len(routes) == 0 {
		return netip.Addr{}, fmt.Errorf("%s: route to %s: %v", node, dst, err)
	}
	src, ok := netip.AddrFromSlice(routes[0].Src)
	if !ok {
		return netip.Addr{}, fmt.Errorf("%s: route to %s has no source address", node, dst)
	}
	return src.Unmap(), nil
}

func (w *labWorkspace) ProxyMode(_ context.Context, node string) (string, error) {
	out, err := w.lab.Run(node, selfexec.Argv(w.lab.Binary, &selfexec.NodeGet{URL: "http://127.0.0.1:10249/proxyMode"})...)
	return strings.TrimSpace(out), err
}

// ProxyModes: the embedded proxy runs iptables, and ipvs where the
// kernel has IP_VS.
func (w *labWorkspace) ProxyModes(context.Context) ([]string, error) {
	if roottest.HasIPVS() {
		return []string{"iptables", "ipvs"}, nil
	}
	return []string{"iptables"}, nil
}

func (w *labWorkspace) SwitchProxyMode(ctx context.Context, mode string) error {
	objs, _, err := w.lab.Store.ReadObjects()
	if err != nil {
		return err
	}
	cm := objs.ConfigMap("kube-system", "kube-proxy")
	if cm == nil {
		return fmt.Errorf("lab %s: no ConfigMap kube-system/kube-proxy", w.lab.Name())
	}
	manifest, err := kit.ProxyConfigMapWithMode(cm, mode)
	if err != nil {
		return err
	}
	if err := w.lab.Apply(ctx, manifest); err != nil {
		return err
	}
	var nodes []string
	for _, n := range w.lab.Topology.Spec.Nodes {
		nodes = append(nodes, n.Name)
	}
	if err := w.lab.RestartProxies(ctx, nodes, Options(w.lab.Binary)); err != nil {
		return err
	}
	return kit.WaitProxyMode(ctx, w, nodes, mode, time.Minute)
}
