package ipvs

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// iptablesModeLeftovers is what iptables mode leaves, plus kubelet's and a
// user's chains that cleanup must keep.
const iptablesModeLeftovers = `*nat
:KUBE-NODEPORTS - [0:0]
:KUBE-SVC-NPX46M4PTMTKRN6Y - [0:0]
:KUBE-SEP-ABCDEFGHIJKLMNOP - [0:0]
-A KUBE-SVC-NPX46M4PTMTKRN6Y -j KUBE-SEP-ABCDEFGHIJKLMNOP
-A KUBE-SEP-ABCDEFGHIJKLMNOP -p tcp -m tcp -j DNAT --to-destination 10.244.1.1:6443
COMMIT
*filter
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FIREWALL - [0:0]
:MY-CHAIN - [0:0]
-A KUBE-FIREWALL -d 127.0.0.0/8 -j DROP
-A MY-CHAIN -j KUBE-EXTERNAL-SERVICES
-A MY-CHAIN -j ACCEPT
COMMIT
`

func TestCleanupRemovesBothModesAndNothingElse(t *testing.T) {
	b, k, ipt := newTestBackend(t, Options{})
	mustSync(t, b, snapshot(sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, nodePort(30080), eps("10.244.1.1:80"))))
	if err := ipt.Restore([]byte(iptablesModeLeftovers)); err != nil {
		t.Fatal(err)
	}
	for _, j := range []iptkernel.JumpRule{
		{Table: "filter", Chain: "INPUT", Target: "KUBE-EXTERNAL-SERVICES", Comment: "kubernetes externally-visible service portals", Match: []string{"-m", "conntrack", "--ctstate", "NEW"}},
		{Table: "filter", Chain: "INPUT", Target: "KUBE-FIREWALL"},
		{Table: "filter", Chain: "INPUT", Target: "MY-CHAIN"},
	} {
		if err := ipt.EnsureJump(j); err != nil {
			t.Fatal(err)
		}
	}
	foreign := kernel.VirtualServer{Address: addr("172.16.0.1"), Protocol: kernel.TCP, Port: 80, Scheduler: "wlc"}
	if err := k.AddVirtualServer(foreign); err != nil {
		t.Fatal(err)
	}
	if err := k.CreateSet("my-set", kernel.HashIP, kernel.Inet); err != nil {
		t.Fatal(err)
	}

	before, err := FindLeftovers(k, ipt)
	if err != nil {
		t.Fatal(err)
	}
	if got := before.Modes(); !slices.Equal(got, []string{"iptables", "ipvs"}) {
		t.Errorf("Modes() = %v", got)
	}
	if len(before.VirtualServers) != 3 || !before.Dummy || len(before.IPSets) != len(Sets) {
		t.Errorf("leftovers before cleanup:\n%s", before)
	}
	if !strings.Contains(before.String(), "iptables per-service chains (KUBE-SVC-/SEP-/EXT-/FW-/SVL-): 2") {
		t.Errorf("String():\n%s", before)
	}

	if err := Cleanup(k, ipt); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	after, err := FindLeftovers(k, ipt)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Empty() {
		t.Errorf("left after cleanup:\n%s", after)
	}
	vss, _ := k.VirtualServers()
	if !slices.Equal(vss, []kernel.VirtualServer{foreign}) {
		t.Errorf("virtual servers after cleanup: %v, want only the foreign one", vss)
	}
	if sets, _ := k.ListSets(); len(sets) != 1 || sets[0].Name != "my-set" {
		t.Errorf("ipsets after cleanup: %v", sets)
	}
	filter := ipt.rules("filter")
	for _, want := range []string{"-A INPUT -j MY-CHAIN", "-A INPUT -j KUBE-FIREWALL", "-A KUBE-FIREWALL -d 127.0.0.0/8 -j DROP", "-A MY-CHAIN -j ACCEPT"} {
		if !slices.Contains(filter, want) {
			t.Errorf("cleanup removed %q; filter now %q", want, filter)
		}
	}
	for _, r := range append(filter, ipt.rules("nat")...) {
		if target := jumpTarget(r); target != "KUBE-FIREWALL" && strings.HasPrefix(target, "KUBE-") {
			t.Errorf("a jump into a removed chain is left: %q", r)
		}
	}
	if calls := k.Calls; slices.Contains(calls, "ipvsadm -D -t 172.16.0.1:80") {
		t.Errorf("cleanup deleted the foreign virtual server")
	}

	// A second cleanup has nothing to do.
	if err := Cleanup(k, ipt); err != nil {
		t.Errorf("second Cleanup: %v", err)
	}
}

func TestCleanupWithoutIPVS(t *testing.T) {
	_, k, ipt := newTestBackend(t, Options{})
	if err := ipt.Restore([]byte(iptablesModeLeftovers)); err != nil {
		t.Fatal(err)
	}
	k.NoIPVS = true
	if err := Cleanup(k, ipt); err != nil {
		t.Fatalf("Cleanup on a kernel without IPVS: %v", err)
	}
	l, err := FindLeftovers(k, ipt)
	if err != nil || !l.Empty() {
		t.Errorf("leftovers %v, %v", l, err)
	}
}

func TestLeftoversForeignTo(t *testing.T) {
	l := &Leftovers{
		Chains: map[string][]string{
			"nat":    {"KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-SVC-2CMXP7HKUVJN7L6M", "KUBE-NODE-PORT", "KUBE-MARK-MASQ"},
			"filter": {"KUBE-FORWARD", "KUBE-EXTERNAL-SERVICES", "KUBE-IPVS-FILTER"},
		},
		Dummy:  true,
		IPSets: []string{"KUBE-CLUSTER-IP"},
	}
	inIPVS := l.ForeignTo("ipvs")
	if got := inIPVS.Chains["nat"]; !slices.Equal(got, []string{"KUBE-NODEPORTS", "KUBE-SVC-2CMXP7HKUVJN7L6M"}) {
		t.Errorf("foreign to ipvs, nat: %v", got)
	}
	if inIPVS.Dummy || len(inIPVS.IPSets) > 0 || !slices.Equal(inIPVS.Chains["filter"], []string{"KUBE-EXTERNAL-SERVICES"}) {
		t.Errorf("foreign to ipvs: %+v", inIPVS)
	}
	if len(inIPVS.NFTables) != 0 {
		t.Errorf("foreign to ipvs: nftables tables %v out of nowhere", inIPVS.NFTables)
	}
	inIPTables := l.ForeignTo("iptables")
	if !inIPTables.Dummy || len(inIPTables.IPSets) != 1 || !slices.Equal(inIPTables.Chains["nat"], []string{"KUBE-NODE-PORT"}) ||
		!slices.Equal(inIPTables.Chains["filter"], []string{"KUBE-IPVS-FILTER"}) {
		t.Errorf("foreign to iptables: %+v", inIPTables)
	}
}

func TestLeftoversNFTables(t *testing.T) {
	l := &Leftovers{Chains: map[string][]string{"nat": {"KUBE-SERVICES"}}, NFTables: []string{"ip"}}
	if got := l.ForeignTo("iptables").NFTables; !slices.Equal(got, []string{"ip"}) {
		t.Errorf("foreign to iptables: nftables %v, want [ip]", got)
	}
	inNFT := l.ForeignTo("nftables")
	if len(inNFT.NFTables) != 0 || !slices.Equal(inNFT.Chains["nat"], []string{"KUBE-SERVICES"}) {
		t.Errorf("foreign to nftables: %+v, want the iptables chains and no nftables table", inNFT)
	}
	if !slices.Contains(l.Modes(), "nftables") || !strings.Contains(l.String(), "nftables table: ip kube-proxy") || l.Empty() {
		t.Errorf("modes %v, string %q, empty %v", l.Modes(), l.String(), l.Empty())
	}
}
