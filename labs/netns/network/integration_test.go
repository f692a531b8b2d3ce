package network

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/podnet"
)

// uniqueLabName is a fresh lab name, so that tests never meet another
// run's namespaces.
func uniqueLabName(t testing.TB) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "it" + hex.EncodeToString(b)
}

// buildLab builds lab and destroys it at cleanup, then checks that nothing
// of it remains.
func buildLab(t testing.TB, lab *topology.Lab) *Plan {
	t.Helper()
	t.Cleanup(func() { destroyAndCheck(t, lab.Name()) })
	start := time.Now()
	plan, err := Build(lab)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Logf("Build(%s, %s): %d steps in %v", lab.Name(), lab.Spec.CNI, len(plan.Steps), time.Since(start))
	return plan
}

func destroyAndCheck(t testing.TB, labName string) {
	t.Helper()
	if err := Destroy(labName); err != nil {
		t.Errorf("Destroy: %v", err)
	}
	if left, _ := listNamespaces(labPrefix(labName)); len(left) > 0 {
		t.Errorf("after Destroy, namespaces remain: %v", left)
	}
	if err := Destroy(labName); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
}

// nl opens a netlink handle inside a lab namespace.
func nl(t testing.TB, ns string) *netlink.Handle {
	t.Helper()
	h, err := netns.GetFromPath(netnsPath(ns))
	if err != nil {
		t.Fatalf("open %s: %v", ns, err)
	}
	defer h.Close()
	n, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatalf("netlink in %s: %v", ns, err)
	}
	t.Cleanup(n.Close)
	return n
}

func mustLink(t testing.TB, h *netlink.Handle, ns, name string) netlink.Link {
	t.Helper()
	l, err := h.LinkByName(name)
	if err != nil {
		t.Fatalf("%s: link %s: %v", ns, name, err)
	}
	return l
}

func addrsOf(t testing.TB, h *netlink.Handle, l netlink.Link) []string {
	t.Helper()
	as, err := h.AddrList(l, unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range as {
		out = append(out, a.IPNet.String())
	}
	return out
}

// routes renders a namespace's IPv4 main-table routes roughly as `ip route`
// does: "<dst> [via <gw>] [dev <dev>] [scope link] [onlink]".
func routes(t testing.TB, h *netlink.Handle) []string {
	t.Helper()
	rs, err := h.RouteList(nil, unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		s := "default"
		if r.Dst != nil && !(r.Dst.IP.IsUnspecified() && r.Dst.Mask[0] == 0) {
			s = r.Dst.String()
		}
		if r.Type == unix.RTN_BLACKHOLE {
			out = append(out, "blackhole "+s)
			continue
		}
		if r.Gw != nil {
			s += " via " + r.Gw.String()
		}
		if r.LinkIndex > 0 {
			l, err := h.LinkByIndex(r.LinkIndex)
			if err == nil {
				s += " dev " + l.Attrs().Name
			}
		}
		if r.Scope == netlink.SCOPE_LINK && r.Gw == nil && r.Protocol != unix.RTPROT_KERNEL {
			s += " scope link"
		}
		if r.Flags&int(netlink.FLAG_ONLINK) != 0 {
			s += " onlink"
		}
		out = append(out, s)
	}
	return out
}

func wantContains(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: missing %q in %q", what, w, got)
		}
	}
}

func sysctlIn(t testing.TB, ns, key string) string {
	t.Helper()
	var v string
	if err := Do(ns, func() error {
		var err error
		v, err = readSysctl(key)
		return err
	}); err != nil {
		t.Fatalf("sysctl %s in %s: %v", key, ns, err)
	}
	return v
}

// rootSnapshot lists the root namespace's links and IPv4 routes (read
// only), to show that building a lab does not touch them.
func rootSnapshot(t testing.TB) []string {
	t.Helper()
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var snap []string
	for _, l := range links {
		snap = append(snap, "link "+l.Attrs().Name)
	}
	rs, err := netlink.RouteList(nil, unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		snap = append(snap, "route "+r.String())
	}
	return snap
}

// TestIntegrationSingleNode builds the single-node lab of clusters/ and
// checks the underlay and flannel's bridge attachment.
func TestIntegrationSingleNode(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	lab, err := topology.Load("../../../clusters/single-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lab.Metadata.Name = uniqueLabName(t)
	hostBefore := rootSnapshot(t)
	plan := buildLab(t, lab)
	name := lab.Name()
	router, node1, client := RouterNamespace(name), NamespaceName(name, "node1"), NamespaceName(name, "client")

	got, err := Namespaces(name)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{client, node1, router}; !slices.Equal(got, want) {
		t.Errorf("Namespaces = %v, want %v", got, want)
	}
	labs, err := List()
	if err != nil || !slices.Contains(labs, name) {
		t.Errorf("List() = %v, %v; want it to contain %s", labs, err, name)
	}

	// Router: a bridge per subnet with the gateway, ports, forwarding, the
	// Service route.
	r := nl(t, router)
	lan0 := mustLink(t, r, router, "lan0")
	if lan0.Type() != "bridge" {
		t.Errorf("lan0 is a %s", lan0.Type())
	}
	wantContains(t, "router lan0 addresses", addrsOf(t, r, lan0), "192.168.31.254/20")
	wantContains(t, "router lan1 addresses", addrsOf(t, r, mustLink(t, r, router, "lan1")), "192.168.55.254/24")
	if port := mustLink(t, r, router, "node1"); port.Attrs().MasterIndex != lan0.Attrs().Index {
		t.Errorf("router port node1 is not in lan0")
	}
	wantContains(t, "router routes", routes(t, r), "10.96.0.0/16 via 192.168.16.73 dev lan0")
	if rs, err := r.RouteGet(net.ParseIP("10.96.0.10")); err != nil || len(rs) == 0 || !rs[0].Gw.Equal(net.ParseIP("192.168.16.73")) {
		t.Errorf("router: route get 10.96.0.10 = %+v, %v; want via node1 192.168.16.73", rs, err)
	}
	if v := sysctlIn(t, router, "net/ipv4/ip_forward"); v != "1" {
		t.Errorf("router ip_forward = %s", v)
	}

	// Node: eth0, default route, forwarding, cni0, bridge-nf.
	n := nl(t, node1)
	wantContains(t, "node1 eth0", addrsOf(t, n, mustLink(t, n, node1, "eth0")), "192.168.16.73/20")
	wantContains(t, "node1 routes", routes(t, n), "default via 192.168.31.254 dev eth0", "10.244.1.0/24 dev cni0")
	if lo := mustLink(t, n, node1, "lo"); lo.Attrs().Flags&net.FlagUp == 0 {
		t.Error("node1 lo is down")
	}
	if v := sysctlIn(t, node1, "net/ipv4/ip_forward"); v != "1" {
		t.Errorf("node1 ip_forward = %s", v)
	}
	if v := sysctlIn(t, node1, bridgeNFKey); v != "1" {
		t.Errorf("node1 bridge-nf-call-iptables = %s", v)
	}
	cni0 := mustLink(t, n, node1, "cni0")
	wantContains(t, "cni0", addrsOf(t, n, cni0), "10.244.1.1/24")
	if h := plan.Hosts[0]; h.Node.Bridge != "cni0" || h.Node.PodGateway.String() != "10.244.1.1" {
		t.Errorf("plan node1 = %+v", h.Node)
	}

	// Client.
	c := nl(t, client)
	wantContains(t, "client routes", routes(t, c), "default via 192.168.55.254 dev eth0")

	// Pods.
	ip, err := NextPodIP(netip.MustParsePrefix("10.244.1.0/24"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := AttachPod(lab, "node1", PodNet{Name: "web", IP: ip})
	if err != nil {
		t.Fatalf("AttachPod: %v", err)
	}
	pp2, err := AttachPod(lab, "node1", PodNet{Name: "web2", IP: netip.MustParseAddr("10.244.1.3")})
	if err != nil {
		t.Fatalf("AttachPod: %v", err)
	}
	veth := mustLink(t, n, node1, pp.HostVeth)
	if veth.Attrs().MasterIndex != cni0.Attrs().Index || !strings.HasPrefix(pp.HostVeth, "veth") || len(pp.HostVeth) != 12 {
		t.Errorf("pod veth %s: master %d, want cni0 (%d)", pp.HostVeth, veth.Attrs().MasterIndex, cni0.Attrs().Index)
	}
	if info, err := n.LinkGetProtinfo(veth); err != nil || !info.Hairpin {
		t.Errorf("pod veth %s: hairpin off (%+v, %v)", pp.HostVeth, info, err)
	}
	p := nl(t, pp.Namespace)
	peth := mustLink(t, p, pp.Namespace, "eth0")
	wantContains(t, "pod eth0", addrsOf(t, p, peth), "10.244.1.2/24")
	if peth.Attrs().MTU != 1450 {
		t.Errorf("pod MTU = %d", peth.Attrs().MTU)
	}
	wantContains(t, "pod routes", routes(t, p), "default via 10.244.1.1 dev eth0")

	pods, err := Pods(name)
	if err != nil || len(pods) != 2 || pods[0].Name != "web" || pods[0].Node != "node1" || pods[0].IP != ip {
		t.Errorf("Pods = %+v, %v", pods, err)
	}

	// Traffic: pod -> gateway, pod -> pod on the same bridge, client ->
	// node, pod -> client (masqueraded by flannel's rules), client ->
	// Service subnet reaches node1 through the router.
	mustPing(t, pp.Namespace, "10.244.1.1")
	mustPing(t, pp.Namespace, "10.244.1.3")
	mustPing(t, client, "192.168.16.73")
	serveRemoteAddr(t, client, "0.0.0.0:8080")
	if src := mustTCP(t, pp.Namespace, "192.168.55.230:8080"); src != "192.168.16.73" {
		t.Errorf("pod -> client arrived from %q, want the node's address (flannel --ip-masq)", src)
	}
	serveRemoteAddr(t, pp2.Namespace, "0.0.0.0:8080")
	if src := mustTCP(t, pp.Namespace, "10.244.1.3:8080"); src != "10.244.1.2" {
		t.Errorf("pod -> pod arrived from %q, want the pod's own address", src)
	}

	// The host's own namespace is as it was.
	if after := rootSnapshot(t); !slices.Equal(after, hostBefore) {
		t.Errorf("the root namespace changed:\nbefore %q\nafter  %q", hostBefore, after)
	}

	// Pod errors at run time.
	if _, err := AttachPod(lab, "node1", PodNet{Name: "web", IP: netip.MustParseAddr("10.244.1.9")}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("attaching web twice: %v", err)
	}
	if err := DetachPod(name, "node1"); err == nil || !strings.Contains(err.Error(), "not a pod") {
		t.Errorf("DetachPod(node1) = %v, want a refusal", err)
	}
	if err := DetachPod(name, "web2"); err != nil {
		t.Errorf("DetachPod: %v", err)
	}
	if _, err := n.LinkByName(pp2.HostVeth); err == nil {
		t.Errorf("after DetachPod, %s is still in the node", pp2.HostVeth)
	}
	if err := DetachPod(name, "web2"); err != nil {
		t.Errorf("second DetachPod: %v", err)
	}
	// A second Build of the same lab is refused and leaves the first alone.
	if _, err := Build(lab); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second Build = %v, want 'already exists'", err)
	}
	if !namespaceExists(node1) {
		t.Error("the refused second Build removed the first lab")
	}
}

// TestIntegrationOverlays builds the nodeport topology with each CNI
// flavour and checks the VXLAN devices, routes, neighbours, FDB entries,
// pod attachment and traffic across the overlay.
func TestIntegrationOverlays(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	for _, cni := range topology.CNIs() {
		t.Run(string(cni), func(t *testing.T) { testOverlay(t, cni) })
	}
}

func testOverlay(t *testing.T, cni topology.CNI) {
	name := uniqueLabName(t)
	lab := newLab(t, labYAML, name, cni)
	plan := buildLab(t, lab)
	hosta, hostb, client := NamespaceName(name, "hosta"), NamespaceName(name, "hostb"), NamespaceName(name, "client")
	calicoPods := cni != topology.CNIFlannelVXLAN

	start := time.Now()
	pa, err := AttachPod(lab, "hosta", PodNet{Name: "pa", IP: netip.MustParseAddr("10.100.40.2")})
	if err != nil {
		t.Fatal(err)
	}
	pa2, err := AttachPod(lab, "hosta", PodNet{Name: "pa2", Namespace: "kube-system", IP: netip.MustParseAddr("10.100.40.3")})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := AttachPod(lab, "hostb", PodNet{Name: "pb", IP: netip.MustParseAddr("10.100.81.2")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("3 × AttachPod: %v", time.Since(start))

	// The VTEPs.
	a, _ := plan.Host("hosta")
	b, _ := plan.Host("hostb")
	va, vb := a.Node.VTEP, b.Node.VTEP
	ha := nl(t, hosta)
	dev, ok := mustLink(t, ha, hosta, va.Device).(*netlink.Vxlan)
	if !ok {
		t.Fatalf("%s is not a vxlan device", va.Device)
	}
	wantVNI, wantPort := 1, 8472
	if cni == topology.CNICalicoProxyARP {
		wantVNI, wantPort = 4096, 4789
	}
	eth0 := mustLink(t, ha, hosta, "eth0")
	if dev.VxlanId != wantVNI || dev.Port != wantPort || dev.Learning || !dev.SrcAddr.Equal(net.ParseIP("192.168.16.73")) ||
		dev.VtepDevIndex != eth0.Attrs().Index || dev.MTU != 1450 || dev.HardwareAddr.String() != va.MAC.String() {
		t.Errorf("%s = id %d port %d learning %v local %v dev %d mtu %d mac %v; want id %d port %d nolearning local 192.168.16.73 dev eth0 mtu 1450 mac %v",
			va.Device, dev.VxlanId, dev.Port, dev.Learning, dev.SrcAddr, dev.VtepDevIndex, dev.MTU, dev.HardwareAddr, wantVNI, wantPort, va.MAC)
	}
	wantContains(t, va.Device+" addresses", addrsOf(t, ha, dev), "10.100.40.0/32")
	wantContains(t, "hosta routes", routes(t, ha), "10.100.81.0/24 via 10.100.81.0 dev "+va.Device+" onlink")
	if cni == topology.CNICalicoProxyARP {
		wantContains(t, "hosta routes", routes(t, ha), "blackhole 10.100.40.0/24")
	}
	neighs, err := ha.NeighList(dev.Attrs().Index, unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(neighs, func(n netlink.Neigh) bool {
		return n.IP.Equal(net.ParseIP("10.100.81.0")) && n.HardwareAddr.String() == vb.MAC.String() && n.State == netlink.NUD_PERMANENT
	}) {
		t.Errorf("hosta: no permanent neighbour 10.100.81.0 lladdr %v on %s: %+v", vb.MAC, va.Device, neighs)
	}
	fdb, err := ha.NeighList(dev.Attrs().Index, unix.AF_BRIDGE)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(fdb, func(n netlink.Neigh) bool {
		return n.HardwareAddr.String() == vb.MAC.String() && n.IP.Equal(net.ParseIP("192.168.16.139")) && n.State == netlink.NUD_PERMANENT
	}) {
		t.Errorf("hosta: no permanent FDB entry %v dst 192.168.16.139 on %s: %+v", vb.MAC, va.Device, fdb)
	}

	// The overlay's iptables rules, in the node only.
	chain := "FLANNEL-POSTRTG"
	if cni == topology.CNICalicoProxyARP {
		chain = "cali-nat-outgoing"
	}
	out, err := NetnsCommand(hosta, lab.Spec.Proxy.IPTablesBackend.Command(), "-w", "5", "-t", "nat", "-S", chain).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "MASQUERADE") {
		t.Errorf("%s in hosta: %v\n%s", chain, err, out)
	}

	// The pods.
	p := nl(t, pa.Namespace)
	peth := mustLink(t, p, pa.Namespace, "eth0")
	if calicoPods {
		wantContains(t, "pa eth0", addrsOf(t, p, peth), "10.100.40.2/32")
		wantContains(t, "pa routes", routes(t, p), "169.254.1.1/32 dev eth0 scope link", "default via 169.254.1.1 dev eth0")
		if pa2.HostVeth != podnet.CalicoVethName("kube-system", "pa2") {
			t.Errorf("pa2 host veth = %s", pa2.HostVeth)
		}
		cali := mustLink(t, ha, hosta, pa.HostVeth)
		if cali.Attrs().HardwareAddr.String() != "ee:ee:ee:ee:ee:ee" {
			t.Errorf("%s MAC = %v", pa.HostVeth, cali.Attrs().HardwareAddr)
		}
		wantContains(t, "hosta routes", routes(t, ha), "10.100.40.2/32 dev "+pa.HostVeth+" scope link")
		for key, want := range map[string]string{
			"net/ipv4/conf/" + pa.HostVeth + "/proxy_arp":    "1",
			"net/ipv4/neigh/" + pa.HostVeth + "/proxy_delay": "0",
			"net/ipv4/conf/" + pa.HostVeth + "/forwarding":   "1",
		} {
			if v := sysctlIn(t, hosta, key); v != want {
				t.Errorf("hosta %s = %s, want %s", key, v, want)
			}
		}
	} else {
		wantContains(t, "pa eth0", addrsOf(t, p, peth), "10.100.40.2/24")
		wantContains(t, "pa routes", routes(t, p), "default via 10.100.40.1 dev eth0")
	}

	// Traffic.
	if calicoPods {
		mustPing(t, pa.Namespace, "192.168.16.73") // pod -> its node, through 169.254.1.1
	} else {
		mustPing(t, pa.Namespace, "10.100.40.1") // pod -> cni0
	}
	mustPing(t, client, "192.168.16.73")     // client -> node, through the router
	mustPing(t, client, "192.168.16.139")    // client -> the other node
	mustPing(t, pa.Namespace, "10.100.40.3") // pod -> pod, same node
	mustPing(t, pa.Namespace, "10.100.81.2") // pod -> pod across the overlay
	mustPing(t, pb.Namespace, "10.100.40.2") // and back
	mustPing(t, hostb, "10.100.40.3")        // node -> remote pod
	serveRemoteAddr(t, pb.Namespace, "0.0.0.0:8080")
	if src := mustTCP(t, pa.Namespace, "10.100.81.2:8080"); src != "10.100.40.2" {
		t.Errorf("pod -> remote pod arrived from %q, want the pod's own address (no NAT inside the pod network)", src)
	}
	serveRemoteAddr(t, client, "0.0.0.0:8080")
	if src := mustTCP(t, pb.Namespace, "192.168.55.230:8080"); src != "192.168.16.139" {
		t.Errorf("pod -> client arrived from %q, want hostb's address (masquerade)", src)
	}

	if calicoPods {
		// Proxy ARP answered 169.254.1.1 with the cali interface's MAC...
		neighs, err := p.NeighList(peth.Attrs().Index, unix.AF_INET)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(neighs, func(n netlink.Neigh) bool {
			return n.IP.Equal(net.ParseIP("169.254.1.1")) && n.HardwareAddr.String() == "ee:ee:ee:ee:ee:ee" &&
				n.State&(netlink.NUD_FAILED|netlink.NUD_INCOMPLETE) == 0
		}) {
			t.Errorf("pa: 169.254.1.1 not resolved to ee:ee:ee:ee:ee:ee: %+v", neighs)
		}
		// ...and nobody has that address.
		for _, ns := range []string{hosta, hostb, pa.Namespace, pb.Namespace, RouterNamespace(name)} {
			h := nl(t, ns)
			as, err := h.AddrList(nil, unix.AF_INET)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range as {
				if a.IP.Equal(net.ParseIP("169.254.1.1")) {
					t.Errorf("%s has the address 169.254.1.1", ns)
				}
			}
		}
	}
}

// TestIntegrationBuildFailureLeavesNothing injects a failing step in the
// middle of a plan: Build must report it and remove what it made.
func TestIntegrationBuildFailureLeavesNothing(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	name := uniqueLabName(t)
	t.Cleanup(func() { Destroy(name) })
	plan, err := PlanLab(newLab(t, labYAML, name, topology.CNICanal))
	if err != nil {
		t.Fatal(err)
	}
	// After hostb's namespace exists, before the overlay.
	at := slices.IndexFunc(plan.Steps, func(s Step) bool {
		a, ok := s.(AddNetns)
		return ok && a.Name == NamespaceName(name, "client")
	})
	bad := AddAddr{NS: NamespaceName(name, "hostb"), Link: "nosuchlink0", Addr: netip.MustParsePrefix("10.0.0.1/24")}
	plan.Steps = slices.Insert(plan.Steps, at, Step(bad))

	err = buildPlan(plan)
	var serr *StepError
	if !errors.As(err, &serr) || serr.Index != at || !strings.Contains(err.Error(), "nosuchlink0") {
		t.Fatalf("buildPlan = %v, want a StepError at step %d naming nosuchlink0", err, at+1)
	}
	t.Logf("error: %v", err)
	if left, _ := listNamespaces(labPrefix(name)); len(left) > 0 {
		t.Errorf("namespaces left after a failed Build: %v", left)
	}
}

// TestIntegrationDestroySharedPrefix: Destroy("x") leaves lab "x-b" alone.
func TestIntegrationDestroySharedPrefix(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	short := uniqueLabName(t)
	long := short + "-b"
	buildLab(t, newLab(t, singleYAML, long, topology.CNIFlannelVXLAN))
	buildLab(t, newLab(t, singleYAML, short, topology.CNIFlannelVXLAN))
	labs, err := List()
	if err != nil || !slices.Contains(labs, short) || !slices.Contains(labs, long) {
		t.Errorf("List() = %v, %v; want %s and %s", labs, err, short, long)
	}
	if err := Destroy(short); err != nil {
		t.Fatal(err)
	}
	if left, _ := Namespaces(short); len(left) > 0 {
		t.Errorf("lab %s still has %v", short, left)
	}
	if left, _ := Namespaces(long); len(left) != 3 {
		t.Errorf("lab %s has %v after destroying %s, want its 3 namespaces", long, left, short)
	}
	// An untagged leftover (as after a crash) goes with its lab.
	stray := NamespaceName(long, "stray")
	if err := createNamedNetns(stray); err != nil {
		t.Fatal(err)
	}
	if err := Destroy(long); err != nil {
		t.Fatal(err)
	}
	if namespaceExists(stray) {
		t.Errorf("untagged %s survived Destroy", stray)
	}
}

// TestIntegrationDo checks that Do runs inside the lab namespace and puts
// the thread back.
func TestIntegrationDo(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	name := uniqueLabName(t)
	buildLab(t, newLab(t, singleYAML, name, topology.CNIFlannelVXLAN))
	host, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	for range 50 {
		var inside []string
		err := Do(NamespaceName(name, "client"), func() error {
			ifs, err := net.Interfaces()
			for _, i := range ifs {
				inside = append(inside, i.Name)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(inside, []string{"lo", "eth0"}) {
			t.Fatalf("interfaces inside the client: %v", inside)
		}
	}
	// Every thread of the process is still in the namespace it started in.
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		h, err := netns.GetFromPath("/proc/self/task/" + task.Name() + "/ns/net")
		if err != nil {
			continue // the thread has exited
		}
		if !h.Equal(host) {
			t.Errorf("thread %s is in another network namespace", task.Name())
		}
		h.Close()
	}
	if err := Do("not-ours", func() error { return nil }); err == nil {
		t.Error("Do entered a namespace without the svclab- prefix")
	}
	wantErr := errors.New("boom")
	if err := Do(NamespaceName(name, "client"), func() error { return wantErr }); !errors.Is(err, wantErr) {
		t.Errorf("Do returned %v, want fn's error", err)
	}
	if err := Do(NamespaceName(name, "client"), func() error { panic("inside") }); err == nil || !strings.Contains(err.Error(), "panic") {
		t.Errorf("Do with a panic = %v", err)
	}
}
