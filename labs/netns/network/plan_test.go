package network

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/podnet"
)

// labYAML is a lab document with its name and CNI filled in by newLab.
const labYAML = `apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: NAME}
spec:
  cni: CNI
  podSubnet: 10.100.0.0/16
  serviceSubnet: 10.254.0.0/16
  nodes:
  - {name: hosta, ip: 192.168.16.73/20, podCIDR: 10.100.40.0/24}
  - {name: hostb, ip: 192.168.16.139/20, podCIDR: 10.100.81.0/24}
  clients:
  - {name: client, ip: 192.168.55.230/24}
`

const singleYAML = `apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: NAME}
spec:
  cni: CNI
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  nodes:
  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}
  clients:
  - {name: client, ip: 192.168.55.230/24}
`

func newLab(t testing.TB, doc, name string, cni topology.CNI) *topology.Lab {
	t.Helper()
	doc = strings.NewReplacer("NAME", name, "CNI", string(cni)).Replace(doc)
	lab, err := topology.Parse([]byte(doc), name+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// TestPlanGolden pins the whole plan of each CNI flavour, as the script it
// renders, plus a pod on each node.
func TestPlanGolden(t *testing.T) {
	for _, cni := range topology.CNIs() {
		t.Run(string(cni), func(t *testing.T) {
			lab := newLab(t, labYAML, "demo", cni)
			plan, err := PlanLab(lab)
			if err != nil {
				t.Fatal(err)
			}
			script := plan.Script()
			for i, node := range []string{"hosta", "hostb"} {
				pp, err := PlanPod(lab, node, PodNet{Name: "pod" + string(rune('a'+i)), IP: netip.MustParseAddr([]string{"10.100.40.2", "10.100.81.2"}[i])})
				if err != nil {
					t.Fatal(err)
				}
				script += pp.Script()
			}
			golden.Check(t, string(cni)+".sh", []byte(script))
		})
	}
}

func TestPlanFacts(t *testing.T) {
	plan, err := PlanLab(newLab(t, labYAML, "demo", topology.CNICanal))
	if err != nil {
		t.Fatal(err)
	}
	r := plan.Router
	if r.Namespace != "svclab-demo.router" || len(r.LANs) != 2 {
		t.Fatalf("router = %+v", r)
	}
	want := []LAN{
		{Bridge: "lan0", Subnet: netip.MustParsePrefix("192.168.16.0/20"), Gateway: netip.MustParseAddr("192.168.31.254")},
		{Bridge: "lan1", Subnet: netip.MustParsePrefix("192.168.55.0/24"), Gateway: netip.MustParseAddr("192.168.55.254")},
	}
	for i := range want {
		if got := r.LANs[i]; got.Bridge != want[i].Bridge || got.Subnet != want[i].Subnet || got.Gateway != want[i].Gateway {
			t.Errorf("LAN %d = %+v, want %+v", i, r.LANs[i], want[i])
		}
	}
	if r.ServiceSubnet.String() != "10.254.0.0/16" || r.ServiceVia.String() != "192.168.16.73" {
		t.Errorf("service route = %v via %v", r.ServiceSubnet, r.ServiceVia)
	}
	a, _ := plan.Host("hosta")
	b, _ := plan.Host("hostb")
	c, _ := plan.Host("client")
	if a.Namespace != "svclab-demo.hosta" || a.RouterPort != "hosta" || a.LAN != "lan0" || a.Gateway.String() != "192.168.31.254" {
		t.Errorf("hosta = %+v", a)
	}
	if c.Node != nil || c.LAN != "lan1" || c.Gateway.String() != "192.168.55.254" {
		t.Errorf("client = %+v", c)
	}
	va, vb := a.Node.VTEP, b.Node.VTEP
	if va.Device != "flannel.1" || va.VNI != 1 || va.Port != 8472 || va.Addr.String() != "10.100.40.0" ||
		va.Local.String() != "192.168.16.73" || va.MTU != 1450 {
		t.Errorf("hosta VTEP = %+v", va)
	}
	if va.MAC.String() == vb.MAC.String() || va.MAC[0]&0x03 != 0x02 {
		t.Errorf("VTEP MACs %v %v: want distinct, locally administered unicast", va.MAC, vb.MAC)
	}
	if a.Node.PodGateway != CalicoGateway || a.Node.Bridge != "" || a.Node.PodMTU != 1450 {
		t.Errorf("hosta pods = %+v", a.Node)
	}
	// Calico's VXLAN mode.
	plan, err = PlanLab(newLab(t, labYAML, "demo", topology.CNICalicoProxyARP))
	if err != nil {
		t.Fatal(err)
	}
	a, _ = plan.Host("hosta")
	if v := a.Node.VTEP; v.Device != "vxlan.calico" || v.VNI != 4096 || v.Port != 4789 {
		t.Errorf("calico VTEP = %+v", v)
	}
	// flannel's bridge.
	plan, err = PlanLab(newLab(t, labYAML, "demo", topology.CNIFlannelVXLAN))
	if err != nil {
		t.Fatal(err)
	}
	a, _ = plan.Host("hosta")
	if a.Node.Bridge != "cni0" || a.Node.PodGateway.String() != "10.100.40.1" {
		t.Errorf("flannel pods = %+v", a.Node)
	}
}

func TestRouterGateway(t *testing.T) {
	subnet := netip.MustParsePrefix("192.168.55.0/24")
	taken := map[netip.Addr]bool{netip.MustParseAddr("192.168.55.254"): true, netip.MustParseAddr("192.168.55.253"): true}
	gw, err := routerGateway(subnet, taken)
	if err != nil || gw.String() != "192.168.55.252" {
		t.Errorf("gateway = %v, %v; want 192.168.55.252 (.254 and .253 are taken)", gw, err)
	}
	small := netip.MustParsePrefix("10.0.0.0/30")
	if _, err := routerGateway(small, map[netip.Addr]bool{netip.MustParseAddr("10.0.0.1"): true, netip.MustParseAddr("10.0.0.2"): true}); err == nil {
		t.Error("full /30: want an error")
	}
	// A host on the last usable address pushes the gateway down one.
	lab := newLab(t, strings.Replace(singleYAML, "192.168.55.230/24", "192.168.55.254/24", 1), "gw", topology.CNIFlannelVXLAN)
	plan, err := PlanLab(lab)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := plan.Host("client"); c.Gateway.String() != "192.168.55.253" {
		t.Errorf("client gateway = %v, want 192.168.55.253", c.Gateway)
	}
}

func TestRouterPortNames(t *testing.T) {
	doc := strings.Replace(singleYAML, "name: client,", "name: lan0,", 1)
	doc = strings.Replace(doc, "name: node1,", "name: a-node-with-a-long-name,", 1)
	doc = strings.Replace(doc, "podCIDR: 10.244.1.0/24}", "podCIDR: 10.244.1.0/24}\n  - {name: lo, ip: 192.168.16.74/20, podCIDR: 10.244.2.0/24}", 1)
	plan, err := PlanLab(newLab(t, doc, "ports", topology.CNIFlannelVXLAN))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, h := range plan.Hosts {
		p := h.RouterPort
		if len(p) > 15 || p == "lo" || strings.HasPrefix(p, "lan") || seen[p] {
			t.Errorf("host %s: router port %q (clashes or too long)", h.Name, p)
		}
		seen[p] = true
	}
}

func TestNaming(t *testing.T) {
	if got := NamespaceName("basic", "node1"); got != "svclab-basic.node1" {
		t.Errorf("NamespaceName = %s", got)
	}
	// Calico: "cali" + sha1("<namespace>.<pod>")[:11].
	if got := podnet.CalicoVethName("default", "nginx"); len(got) != 15 || !strings.HasPrefix(got, "cali") || got != "cali"+hashHex("default.nginx", 11) {
		t.Errorf("podnet.CalicoVethName = %s", got)
	}
	if got := BridgeVethName("default", "nginx"); len(got) != 12 || !strings.HasPrefix(got, "veth") {
		t.Errorf("BridgeVethName = %s", got)
	}
	tg := tag{Lab: "a-b", Role: "pod", Node: "n1"}
	if back, ok := parseTag(tg.String()); !ok || back != tg {
		t.Errorf("tag round trip: %q -> %+v", tg.String(), back)
	}
	if _, ok := parseTag("some other alias"); ok {
		t.Error("parseTag accepted a foreign alias")
	}
}

func TestNextPodIP(t *testing.T) {
	cidr := netip.MustParsePrefix("10.244.1.0/24")
	ip := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	if got, err := NextPodIP(cidr, nil); err != nil || got != ip("10.244.1.2") {
		t.Errorf("NextPodIP(empty) = %v, %v", got, err)
	}
	if got, _ := NextPodIP(cidr, []netip.Addr{ip("10.244.1.2"), ip("10.244.1.4")}); got != ip("10.244.1.3") {
		t.Errorf("NextPodIP = %v, want the first gap", got)
	}
	small := netip.MustParsePrefix("10.244.1.0/30")
	if got, err := NextPodIP(small, nil); err != nil || got != ip("10.244.1.2") {
		t.Errorf("NextPodIP(/30) = %v, %v", got, err)
	}
	if _, err := NextPodIP(small, []netip.Addr{ip("10.244.1.2")}); err == nil || !strings.Contains(err.Error(), "full") {
		t.Errorf("NextPodIP(full) = %v", err)
	}
	if _, err := NextPodIP(netip.MustParsePrefix("10.244.1.0/31"), nil); err == nil {
		t.Error("NextPodIP(/31): want an error")
	}
}

func TestPlanPodErrors(t *testing.T) {
	lab := newLab(t, labYAML, "demo", topology.CNIFlannelVXLAN)
	ip := netip.MustParseAddr
	tests := []struct {
		node string
		pod  PodNet
		want string
	}{
		{"nope", PodNet{Name: "p", IP: ip("10.100.40.2")}, `no such node (nodes: hosta, hostb)`},
		{"client", PodNet{Name: "p", IP: ip("10.100.40.2")}, `no such node`},
		{"hosta", PodNet{Name: "P_1", IP: ip("10.100.40.2")}, `not a DNS subdomain`},
		{"hosta", PodNet{Name: "router", IP: ip("10.100.40.2")}, `reserved for the router`},
		{"hosta", PodNet{Name: "hostb", IP: ip("10.100.40.2")}, `already the name of a host`},
		{"hosta", PodNet{Name: "p"}, `no pod IP given`},
		{"hosta", PodNet{Name: "p", IP: ip("10.100.81.2")}, `not in the node's podCIDR 10.100.40.0/24`},
		{"hosta", PodNet{Name: "p", IP: ip("10.100.40.0")}, `network address`},
		{"hosta", PodNet{Name: "p", IP: ip("10.100.40.255")}, `broadcast address`},
		{"hosta", PodNet{Name: "p", IP: ip("10.100.40.1")}, `reserved for the node`},
		{"hosta", PodNet{Name: "p", Namespace: "Kube_System", IP: ip("10.100.40.2")}, `Kubernetes namespace`},
	}
	for _, tt := range tests {
		_, err := PlanPod(lab, tt.node, tt.pod)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "plan pod ") {
			t.Errorf("PlanPod(%s, %+v) = %v, want an error containing %q", tt.node, tt.pod, err, tt.want)
		}
	}
}
