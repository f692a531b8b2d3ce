package network

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/topology"
)

// TestIntegrationPodIPReuse gives a pod's IP to a new pod (a new MAC behind
// the same address, as a Deployment scaled down and up again does) right
// after every neighbour of the old pod has talked to it, and asserts that
// each of them reaches the new pod at once: its node, a pod on the same
// node, the other node (over the overlay) and a pod there.
//
// Before the attachment announced a pod's address, the node's neighbour
// cache on cni0 (and the other pod's on its eth0) kept the old MAC for
// 15–45 s (REACHABLE for base_reachable_time, then DELAY and unicast
// PROBEs), so on flannel-vxlan every connection below timed out.
func TestIntegrationPodIPReuse(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	for _, cni := range topology.CNIs() {
		t.Run(string(cni), func(t *testing.T) { testPodIPReuse(t, cni) })
	}
}

func testPodIPReuse(t *testing.T, cni topology.CNI) {
	name := uniqueLabName(t)
	lab := newLab(t, labYAML, name, cni)
	buildLab(t, lab)
	hosta, hostb := NamespaceName(name, "hosta"), NamespaceName(name, "hostb")
	ip := netip.MustParseAddr("10.100.40.2")
	target := netip.AddrPortFrom(ip, 8080).String()

	attach := func(node, pod string, ip netip.Addr) *PodPlan {
		t.Helper()
		pp, err := AttachPod(lab, node, PodNet{Name: pod, IP: ip})
		if err != nil {
			t.Fatal(err)
		}
		return pp
	}
	attach("hosta", "old", ip)
	attach("hosta", "peer", netip.MustParseAddr("10.100.40.3"))
	attach("hostb", "remote", netip.MustParseAddr("10.100.81.2"))
	froms := []string{hosta, NamespaceName(name, "peer"), hostb, NamespaceName(name, "remote")}

	serveRemoteAddr(t, NamespaceName(name, "old"), target)
	for _, from := range froms {
		mustTCP(t, from, target)
	}
	if t.Failed() {
		t.Fatal("the first pod is not reachable from everywhere")
	}

	if err := DetachPod(name, "old"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	pp := attach("hosta", "new", ip)
	serveRemoteAddr(t, pp.Namespace, target)
	t.Logf("AttachPod(new, %s): %v", ip, time.Since(start))
	for _, from := range froms {
		if _, err := probe(t, from, "tcp "+target); err != nil {
			t.Errorf("right after the IP was reused: %v", err)
		}
	}

	// What the node holds for the address now: the new pod's MAC (on cni0
	// learnt from the pod's gratuitous ARP; on the cali* interface the
	// permanent entry Felix writes).
	newMAC := podMAC(t, pp.Namespace)
	dev := PodBridge
	if cni != topology.CNIFlannelVXLAN {
		dev = pp.HostVeth
	}
	h := nl(t, hosta)
	if cni == topology.CNIFlannelVXLAN {
		// Ports came and went: the bridge kept its MAC (so the pods'
		// entries for their gateway stay right).
		if got, want := mustLink(t, h, hosta, PodBridge).Attrs().HardwareAddr, podBridgeMAC("hosta"); got.String() != want.String() {
			t.Errorf("hosta: cni0's MAC is %v, want the fixed %v", got, want)
		}
	}
	link := mustLink(t, h, hosta, dev)
	neighs, err := h.NeighList(link.Attrs().Index, unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range neighs {
		if !n.IP.Equal(net.IP(ip.AsSlice())) {
			continue
		}
		found = true
		if n.HardwareAddr.String() != newMAC.String() {
			t.Errorf("hosta: neighbour %s on %s is %v, want the new pod's %v", ip, dev, n.HardwareAddr, newMAC)
		}
		if cni != topology.CNIFlannelVXLAN && n.State != netlink.NUD_PERMANENT {
			t.Errorf("hosta: neighbour %s on %s has state %#x, want permanent", ip, dev, n.State)
		}
	}
	if !found {
		t.Errorf("hosta: no neighbour entry for %s on %s: %+v", ip, dev, neighs)
	}
}

// podMAC is the MAC of eth0 in a pod namespace.
func podMAC(t testing.TB, ns string) net.HardwareAddr {
	t.Helper()
	return mustLink(t, nl(t, ns), ns, "eth0").Attrs().HardwareAddr
}

// TestIntegrationAnnounceRefused: when the node keeps another MAC for the
// address after the announcement (here a permanent entry, which Linux never
// lets an ARP packet change), attaching the pod fails, says so, and leaves
// nothing of the pod behind.
func TestIntegrationAnnounceRefused(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	name := uniqueLabName(t)
	lab := newLab(t, labYAML, name, topology.CNIFlannelVXLAN)
	buildLab(t, lab)
	hosta := NamespaceName(name, "hosta")
	ip := netip.MustParseAddr("10.100.40.2")
	h := nl(t, hosta)
	cni0 := mustLink(t, h, hosta, PodBridge)
	// cni0's MAC is fixed (see podBridgeMAC): were it not, the pod's veth
	// joining could change it, which flushes every entry on cni0.
	stale := net.HardwareAddr{0x02, 0, 0, 0, 0, 0x42}
	if err := h.NeighAdd(&netlink.Neigh{LinkIndex: cni0.Attrs().Index, Family: unix.AF_INET, State: netlink.NUD_PERMANENT,
		IP: net.IP(ip.AsSlice()), HardwareAddr: stale}); err != nil {
		t.Fatal(err)
	}
	_, err := AttachPod(lab, "hosta", PodNet{Name: "p", IP: ip})
	if err == nil || !strings.Contains(err.Error(), "still holds "+stale.String()) {
		t.Fatalf("AttachPod = %v, want an error saying cni0 still holds %s", err, stale)
	}
	t.Log(err)
	if namespaceExists(NamespaceName(name, "p")) {
		t.Error("the pod's namespace remains")
	}
	if links, _ := h.LinkList(); slices.ContainsFunc(links, func(l netlink.Link) bool { return l.Attrs().Name == BridgeVethName("default", "p") }) {
		t.Error("the pod's node-side veth remains")
	}
}
