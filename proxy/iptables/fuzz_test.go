package iptables_test

import (
	"bytes"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
	"github.com/svclab/svclab/proxy/iptables/localtraffic"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// The fuzz cluster's IPv6 side: modeltest.Generate's IPv6 pod address
// fd00:244::2 is in fuzzClusterCIDRv6; the node's IPv6 address.
const (
	fuzzClusterCIDRv6 = "fd00:244::/64"
	fuzzNodeIPv6      = "fd00:192:168::10"
	fuzzPodIPv6       = "fd00:244::9:9"
)

// fuzzFamilies are the families every fuzz input is rendered in, as a
// dual-stack node's two proxiers would.
var fuzzFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}

// fuzzSnapshot is family's snapshot of modeltest.Generate(data).
func fuzzSnapshot(family corev1.IPFamily, data []byte) *model.Snapshot {
	services, slices := modeltest.Generate(data)
	return model.BuildFamily(family, services, slices, modeltest.NodeName)
}

// fuzzOptions picks the renderer's options of family from one byte: the
// local detector, masquerade-all, the masquerade bit, --random-fully,
// localhost node ports, nodePortAddresses and the conntrack sysctl.
func fuzzOptions(family corev1.IPFamily, b byte) iptables.Options {
	o := iptables.Options{Family: family, NodeIP: netip.MustParseAddr(modeltest.NodeIP)}
	clusterCIDR := modeltest.ClusterCIDR
	if family == corev1.IPv6Protocol {
		o.NodeIP, clusterCIDR = netip.MustParseAddr(fuzzNodeIPv6), fuzzClusterCIDRv6
	}
	switch b % 4 {
	case 0:
		o.ClusterCIDR = clusterCIDR
	case 1:
		o.LocalDetector = localtraffic.ByBridgeInterface("cni0")
	case 2:
		o.LocalDetector = localtraffic.ByInterfaceNamePrefix("veth")
	}
	o.MasqueradeAll = b&4 != 0
	if b&8 != 0 {
		o.MasqueradeBit = 31
	}
	o.RandomFully = b&16 != 0
	o.LocalhostNodePorts = b&32 != 0
	if b&64 != 0 {
		o.NodePortAddresses = []netip.Addr{o.NodeIP}
	}
	o.ConntrackTCPBeLiberal = b&128 != 0
	return o
}

// FuzzRender builds Services and EndpointSlices from the input
// (modeltest.Generate), turns them into a snapshot of each IP family and
// renders it with a renderer of that family, then changes to a second
// generated state. Properties, in both families:
//   - no panic; the full sync goes through iptables.Sync into the fake that
//     rejects what iptables-restore rejects (a jump to a missing chain, a
//     bad option, a target in the wrong table, a chain name too long);
//   - every chain jumped to is declared in the same payload;
//   - determinism: a fresh renderer on a rebuilt snapshot writes the same
//     bytes;
//   - behaviour: a pod's packet to each cluster IP:port reaches exactly the
//     endpoints model.CategorizeEndpoints says it may;
//   - the partial sync to the second state is accepted too and leaves the
//     tables a fresh full sync of that state would.
func FuzzRender(f *testing.F) {
	// Besides modeltest's seeds, testdata/fuzz/FuzzRender/ipv6-rich-*
	// are inputs whose IPv6 snapshot is rich (IPv6 and dual-stack services
	// with IPv6 endpoints, node ports, external IPs, source ranges).
	modeltest.AddSeeds(f)
	f.Fuzz(func(t *testing.T, o byte, first, second []byte) {
		for _, family := range fuzzFamilies {
			t.Run(string(family), func(t *testing.T) { fuzzRender(t, family, o, first, second) })
		}
	})
}

// fuzzRender is one family's run of FuzzRender.
func fuzzRender(t *testing.T, family corev1.IPFamily, o byte, first, second []byte) {
	opts := fuzzOptions(family, o)
	snap := fuzzSnapshot(family, first)
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, opts)
	res, err := iptables.Sync(fake, r, snap)
	if err != nil {
		t.Fatalf("full sync rejected: %v", err)
	}
	checkAllJumpTargetsDeclared(t, res.Payload())
	if again := newRenderer(t, opts).Render(fuzzSnapshot(family, first)); !bytes.Equal(again.Payload(), res.Payload()) {
		t.Fatalf("the same input renders differently:\n%s", golden.LineDiff(string(res.Payload()), string(again.Payload())))
	}
	if opts.LocalDetector == nil {
		checkClusterIPFlows(t, fake.Dump(), snap, opts)
	}

	next := fuzzSnapshot(family, second)
	if _, err := iptables.Sync(fake, r, next); err != nil {
		t.Fatalf("sync to the second state rejected: %v", err)
	}
	assertSameAsFreshFullSync(t, fake, opts, fuzzSnapshot(family, second))
}

// checkClusterIPFlows traces a pod's first packet to every cluster IP:port
// and wants the endpoints the model says internal traffic may use: the
// Cluster set, or with internalTrafficPolicy Local this node's.
func checkClusterIPFlows(t *testing.T, dump *iptablestest.Dump, snap *model.Snapshot, opts iptables.Options) {
	t.Helper()
	tracer := &iptablestest.Tracer{Dump: dump, NodeIPs: []netip.Addr{opts.NodeIP}}
	pod := netip.MustParseAddr("10.244.9.9")
	if opts.Family == corev1.IPv6Protocol {
		pod = netip.MustParseAddr(fuzzPodIPv6)
	}
	for _, sp := range snap.ServicePorts {
		cluster, local, _, _ := model.CategorizeEndpoints(sp)
		eps := cluster
		if sp.InternalPolicyLocal {
			eps = local
		}
		want := []string{}
		for _, ep := range eps {
			want = append(want, ep.String())
		}
		slices.Sort(want)
		want = slices.Compact(want)
		res := tracer.Trace(iptablestest.Packet{
			Source:          pod,
			Destination:     sp.ClusterIP,
			Protocol:        strings.ToLower(string(sp.Protocol)),
			DestinationPort: int(sp.Port),
		})
		got := res.Destinations()
		if got == nil {
			got = []string{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s (%s:%s): a pod reaches %v, want %v\n%s", sp.Name, sp.ClusterIP, strconv.Itoa(int(sp.Port)), got, want, res)
		}
		if len(want) == 0 && !res.Rejected() && !res.Dropped() {
			t.Errorf("%s: no endpoint, but a pod's packet is neither rejected nor dropped\n%s", sp.Name, res)
		}
	}
}
