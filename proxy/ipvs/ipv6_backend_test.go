package ipvs

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel/kerneltest"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// dualStackNode is one fake kernel (shared, as one network namespace's
// IPVS table, kube-ipvs0 and ipsets are) with an IPv4 and an IPv6
// proxier, each with its own fake iptables (iptables and ip6tables are
// separate tables in the kernel).
type dualStackNode struct {
	k          *kerneltest.Fake
	v4, v6     *Backend
	ipt4, ipt6 *fakeIPTables
}

func newDualStackNode(t *testing.T) *dualStackNode {
	t.Helper()
	n := &dualStackNode{k: kerneltest.New(nodeAddressesOfBothFamilies()...), ipt4: newFakeIPTables(), ipt6: newFakeIPTables()}
	var err error
	n.v4, err = New(n.k, n.ipt4, Options{ClusterCIDR: prefix(clusterPod), KernelRelease: "6.1.0-18-amd64"}, nil)
	if err != nil {
		t.Fatalf("New (IPv4): %v", err)
	}
	n.v6, err = New(n.k, n.ipt6, Options{Family: corev1.IPv6Protocol, ClusterCIDR: prefix(clusterPod6), KernelRelease: "6.1.0-18-amd64"}, nil)
	if err != nil {
		t.Fatalf("New (IPv6): %v", err)
	}
	n.k.ResetCalls()
	n.k.TakeCounts()
	return n
}

// checkKernelMatchesFamily is checkKernelMatches for the proxier of family.
func checkKernelMatchesFamily(t *testing.T, k *kerneltest.Fake, family corev1.IPFamily, d *Desired) {
	t.Helper()
	defer k.TakeCounts()
	a, err := ReadActualOf(k, family)
	if err != nil {
		t.Fatal(err)
	}
	if rest := Diff(d, a, DiffOptions{AppliedIPTables: d.IPTables}); len(rest) != 0 {
		t.Fatalf("the kernel differs from the %s proxier's desired state:\n%s", family, rest)
	}
}

// TestIPv6ProxierFirstSyncPlan: what the IPv6 proxier asks of an empty
// node, op by op, for an IPv6 ClusterIP and NodePort service (golden:
// testdata/ipv6_first_sync_plan.golden). Node ports listen on the global
// IPv6 addresses only: not on the link-local one, not on ::1, not on the
// IPv4 ones.
func TestIPv6ProxierFirstSyncPlan(t *testing.T) {
	n := newDualStackNode(t)
	if got, want := n.v6.Describe(), "IPVS (IPv6, kernel 6.1.0-18-amd64, scheduler rr)"; got != want || n.v6.Family() != corev1.IPv6Protocol || n.v4.Family() != corev1.IPv4Protocol {
		t.Errorf("Describe() = %q, want %q; families %q and %q", got, want, n.v4.Family(), n.v6.Family())
	}
	snap := snapshot6(sp("default", "web", "http", corev1.ProtocolTCP, "fd00:10:96::20", 80, nodePort(30080),
		eps("local:[fd00:10:244::8]:8080", "[fd00:10:244:1::9]:8080")))
	res := mustSync(t, n.v6, snap)
	golden.Check(t, "ipv6_first_sync_plan.golden", []byte(res.Plan.String()))
	checkKernelMatchesFamily(t, n.k, corev1.IPv6Protocol, mustDesired(t, n.v6, n.k, snap))

	again := mustSync(t, n.v6, snap)
	if again.Ops != 0 || again.Full {
		t.Errorf("the second sync of the same state: full=%v, plan:\n%s", again.Full, again.Plan)
	}
	n.v6.ForceFullSync()
	// A full sync ensures the jumps and restores the payload, nothing else.
	if full := mustSync(t, n.v6, snap); full.Ops != len(jumpRules)+1 || full.Plan.Count(OpEnsureJump) != len(jumpRules) || full.Plan.Count(OpRestore) != 1 {
		t.Errorf("a full sync of the same state: plan:\n%s", full.Plan)
	}
}

// TestDualStackProxiersLeaveEachOthersState: the IPv4 and the IPv6 proxier
// of one node share the IPVS table, kube-ipvs0 and the ipsets' namespace;
// neither deletes the other's virtual servers, addresses or sets, on a
// partial sync or on a full one, as upstream's proxiers keep to their
// family.
func TestDualStackProxiersLeaveEachOthersState(t *testing.T) {
	n := newDualStackNode(t)
	snap4 := snapshot(kubeDNS()...)
	snap6 := snapshot6(kubeDNS6()...)
	mustSync(t, n.v4, snap4)
	mustSync(t, n.v6, snap6)
	for round := range 2 {
		if round == 1 {
			n.v4.ForceFullSync()
			n.v6.ForceFullSync()
		}
		for _, b := range []*Backend{n.v4, n.v6} {
			res := mustSync(t, b, map[*Backend]*model.Snapshot{n.v4: snap4, n.v6: snap6}[b])
			for _, op := range res.Plan {
				if op.Kind != OpEnsureJump && op.Kind != OpRestore {
					t.Errorf("round %d, %s proxier: %s", round, b.settings.Family, op)
				}
			}
		}
	}
	checkKernelMatchesFamily(t, n.k, corev1.IPv4Protocol, mustDesired(t, n.v4, n.k, snap4))
	checkKernelMatchesFamily(t, n.k, corev1.IPv6Protocol, mustDesired(t, n.v6, n.k, snap6))

	addrs, _, _ := n.k.Addresses(DummyDevice)
	want := []netip.Addr{addr("10.96.0.10"), addr("fd00:10:96::a")}
	if !slices.Equal(addrs, want) {
		t.Errorf("kube-ipvs0 holds %v, want %v", addrs, want)
	}
	sets, _ := n.k.ListSets()
	if len(sets) != 2*len(Sets) {
		t.Errorf("%d ipsets, want %d of each family: %v", len(sets), len(Sets), sets)
	}
	if _, entries, _, _ := n.k.Entries("KUBE-6-CLUSTER-IP"); !slices.Equal(entries, []string{"fd00:10:96::a,tcp:53", "fd00:10:96::a,udp:53"}) {
		t.Errorf("KUBE-6-CLUSTER-IP holds %q", entries)
	}
	if n.ipt4.restores == nil || n.ipt6.restores == nil || string(n.ipt6.restores[len(n.ipt6.restores)-1]) == string(n.ipt4.restores[len(n.ipt4.restores)-1]) {
		t.Errorf("each family's payload goes to its own tables")
	}

	// The IPv6 services go; the IPv4 ones stay.
	res := mustSync(t, n.v6, snapshot6())
	if got := res.Plan.Count(OpDeleteVirtualServer); got != 2 {
		t.Errorf("removing the IPv6 services deleted %d virtual servers:\n%s", got, res.Plan)
	}
	vss, _ := n.k.VirtualServers()
	if len(vss) != 2 || !vss[0].Address.Is4() || !vss[1].Address.Is4() {
		t.Errorf("virtual servers left: %v", vss)
	}
}

// TestGracefulTerminationOfIPv6TCPRealServers: a leaving IPv6 destination
// with connections drains at weight 0, as an IPv4 one does, and is read
// back alone from the kernel (the written-state cache).
func TestGracefulTerminationOfIPv6TCPRealServers(t *testing.T) {
	n := newDualStackNode(t)
	two := sp("default", "web", "", corev1.ProtocolTCP, "fd00:10:96::20", 80, eps("[fd00:10:244:1::1]:80", "[fd00:10:244:1::2]:80"))
	one := sp("default", "web", "", corev1.ProtocolTCP, "fd00:10:96::20", 80, eps("[fd00:10:244:1::1]:80"))
	vs := kernel.VirtualServer{Address: addr("fd00:10:96::20"), Protocol: kernel.TCP, Port: 80}
	leaving := kernel.RealServer{Address: addr("fd00:10:244:1::2"), Port: 80}

	mustSync(t, n.v6, snapshot6(two))
	n.k.ResetCalls()
	n.k.TakeCounts()
	if !n.k.SetConnections(vs, leaving, 2, 1) {
		t.Fatal("real server [fd00:10:244:1::2]:80 missing after the first sync")
	}
	res := mustSync(t, n.v6, snapshot6(one))
	checkCalls(t, n.k, "ipvsadm -e -t [fd00:10:96::20]:80 -r [fd00:10:244:1::2]:80 -m -w 0")
	checkCounts(t, n.k, res, kernel.Calls{"NodeAddresses": 1, "RealServers": 1, "UpdateRealServer": 1})

	n.k.SetConnections(vs, leaving, 0, 0)
	mustSync(t, n.v6, snapshot6(one))
	checkCalls(t, n.k, "ipvsadm -d -t [fd00:10:96::20]:80 -r [fd00:10:244:1::2]:80")
}

// TestIPv6PartialSyncsMatchTheKernel: between full syncs the IPv6
// proxier diffs against what it wrote (written.go), and that record stays
// what the kernel holds, next to an IPv4 proxier writing the same kernel.
func TestIPv6PartialSyncsMatchTheKernel(t *testing.T) {
	n := newDualStackNode(t)
	states := [][]*model.ServicePort{
		kubeDNS6(),
		{sp("default", "web", "", corev1.ProtocolTCP, "fd00:10:96::20", 80, nodePort(30080), eps("[fd00:10:244:1::1]:80"))},
		append(kubeDNS6(), sp("default", "web", "", corev1.ProtocolUDP, "fd00:10:96::20", 80, eps("local:[fd00:10:244::3]:80"))),
		nil,
	}
	for i, sps := range states {
		mustSync(t, n.v4, snapshot(kubeDNS()...))
		res := mustSync(t, n.v6, snapshot6(sps...))
		if res.Full != (i == 0) {
			t.Errorf("sync %d: full=%v", i, res.Full)
		}
		checkKernelMatchesFamily(t, n.k, corev1.IPv6Protocol, mustDesired(t, n.v6, n.k, snapshot6(sps...)))
		checkKernelMatchesFamily(t, n.k, corev1.IPv4Protocol, mustDesired(t, n.v4, n.k, snapshot(kubeDNS()...)))
	}
}

// TestOptionsFromConfigForIPv6 hands the IPv6 proxier the IPv6 CIDRs and
// addresses of a dual-stack configuration, as upstream's filterCIDRs and
// NewNodePortAddresses do.
func TestOptionsFromConfigForIPv6(t *testing.T) {
	cfg := parseConfig(t, `clusterCIDR: 10.244.0.0/16,fd00:10:244::/56
bindAddress: 192.168.0.10
nodePortAddresses: ["192.168.0.0/24", "fc00:f853:ccd:e793::/64"]
ipvs:
  excludeCIDRs: ["172.16.0.0/12", "fd00:99::/32"]
`)
	o, err := OptionsFromConfigFor(cfg, corev1.IPv6Protocol)
	if err != nil {
		t.Fatal(err)
	}
	if o.Family != corev1.IPv6Protocol || o.ClusterCIDR != prefix("fd00:10:244::/56") || o.NodeIP.IsValid() {
		t.Errorf("family %q, cluster CIDR %v, node IP %v (the bind address is IPv4)", o.Family, o.ClusterCIDR, o.NodeIP)
	}
	if !slices.Equal(o.ExcludeCIDRs, []netip.Prefix{prefix("fd00:99::/32")}) || !slices.Equal(o.NodePortCIDRs, []netip.Prefix{prefix("fc00:f853:ccd:e793::/64")}) {
		t.Errorf("CIDRs: exclude %v, node ports %v", o.ExcludeCIDRs, o.NodePortCIDRs)
	}
	v4, err := OptionsFromConfigFor(cfg, corev1.IPv4Protocol)
	if err != nil {
		t.Fatal(err)
	}
	if v4.Family != "" || v4.ClusterCIDR != prefix("10.244.0.0/16") {
		t.Errorf("IPv4 options: family %q (want the zero value), cluster CIDR %v", v4.Family, v4.ClusterCIDR)
	}
	if _, err := OptionsFromConfigFor(cfg, "IPv5"); err == nil {
		t.Error("family IPv5 accepted")
	}
}

// FuzzDualStackPartialSyncsMatchTheKernel is FuzzPartialSyncsMatchTheKernel
// for a dual-stack node: the IPv4 and the IPv6 proxier (its states carried
// over to IPv6 by snapshotToIPv6) sync one fake kernel by turns, and after
// each sync both proxiers' records (written.go) still are what the kernel
// holds of their family.
func FuzzDualStackPartialSyncsMatchTheKernel(f *testing.F) {
	modeltest.AddSeeds(f)
	f.Fuzz(func(t *testing.T, _ byte, first, second []byte) {
		n := newDualStackNode(t)
		for i, data := range [][]byte{first, second, first, second} {
			snap4 := modeltest.Snapshot(data)
			snap6 := snapshotToIPv6(snap4)
			for _, step := range []struct {
				b    *Backend
				snap *model.Snapshot
			}{{n.v4, snap4}, {n.v6, snap6}} {
				res, err := step.b.Sync(step.snap)
				if err != nil {
					t.Fatalf("sync %d of the %s proxier: %v", i, step.b.settings.Family, err)
				}
				if res.Full != (i == 0) {
					t.Fatalf("sync %d of the %s proxier: full=%v", i, step.b.settings.Family, res.Full)
				}
			}
			checkKernelMatchesFamily(t, n.k, corev1.IPv4Protocol, mustDesired(t, n.v4, n.k, snap4))
			checkKernelMatchesFamily(t, n.k, corev1.IPv6Protocol, mustDesired(t, n.v6, n.k, snap6))
		}
	})
}
