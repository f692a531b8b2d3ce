package nftables_test

import (
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
	"github.com/svclab/svclab/proxy/nftables"
)

// The fuzz cluster's IPv6 side: modeltest.Generate's IPv6 pod address
// fd00:244::2 is in fuzzClusterCIDRv6, its IPv6 cluster IPs fd00:96::N in
// fuzzServiceCIDRv6; the node's IPv6 address.
const (
	fuzzClusterCIDRv6 = "fd00:244::/64"
	fuzzServiceCIDRv6 = "fd00:96::/112"
	fuzzNodeIPv6      = "fd00:192:168::10"
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
// local detector, masquerade-all, the masquerade bit,
// --nodeport-addresses and service CIDRs.
func fuzzOptions(family corev1.IPFamily, b byte) nftables.Options {
	o := nftables.Options{Family: family, NodeIP: netip.MustParseAddr(modeltest.NodeIP)}
	clusterCIDR, serviceCIDR := netip.MustParsePrefix(modeltest.ClusterCIDR), netip.MustParsePrefix("10.96.0.0/12")
	if family == corev1.IPv6Protocol {
		o.NodeIP = netip.MustParseAddr(fuzzNodeIPv6)
		clusterCIDR, serviceCIDR = netip.MustParsePrefix(fuzzClusterCIDRv6), netip.MustParsePrefix(fuzzServiceCIDRv6)
	}
	switch b % 4 {
	case 0:
		o.LocalDetector = nftables.DetectLocalByCIDR(clusterCIDR)
	case 1:
		o.LocalDetector = nftables.DetectLocalByBridgeInterface("cni0")
	case 2:
		o.LocalDetector = nftables.DetectLocalByInterfaceNamePrefix("veth")
	}
	o.MasqueradeAll = b&4 != 0
	if b&8 != 0 {
		o.MasqueradeBit = 31
	}
	if b&16 != 0 {
		o.NodePortCIDRs = []netip.Prefix{netip.PrefixFrom(o.NodeIP, o.NodeIP.BitLen())}
		o.NodePortAddresses = []netip.Addr{o.NodeIP}
	}
	if b&32 != 0 {
		o.ServiceCIDRs = []netip.Prefix{serviceCIDR}
	}
	return o
}

// FuzzRender builds two generated states (modeltest.Generate) and syncs
// each family's snapshots in turn into a knftables.Fake of that family's
// table (ip, ip6), which rejects what nft would (a rule
// or element naming a missing chain, set or map, a duplicate, a bad
// delete). Properties:
//   - no panic, and both syncs are accepted;
//   - determinism: a fresh syncer on a rebuilt snapshot dumps the same;
//   - the partial sync to the second state (plus the later deletion of
//     stale chains) leaves the table a fresh full sync of that state would;
//   - a third sync of the same state runs an empty transaction.
func FuzzRender(f *testing.F) {
	// Besides modeltest's seeds, testdata/fuzz/FuzzRender/ipv6-rich-*
	// are inputs whose IPv6 snapshot is rich.
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
	clock := newClock()
	s, fake := newSyncer(t, opts, clock)
	mustSync(t, s, fuzzSnapshot(family, first))
	again, againFake := newSyncer(t, opts, nil)
	mustSync(t, again, fuzzSnapshot(family, first))
	if fake.Dump() != againFake.Dump() {
		t.Fatalf("the same input dumps differently")
	}
	mustSync(t, s, fuzzSnapshot(family, second))
	clock.advance(2 * time.Second)
	if res := mustSync(t, s, fuzzSnapshot(family, second)); res.Operations != 0 && s.StaleChains() != 0 {
		t.Fatalf("stale chains left after the delay: %d", s.StaleChains())
	}
	if res := mustSync(t, s, fuzzSnapshot(family, second)); res.Operations != 0 {
		t.Fatalf("an unchanged state ran %d operations", res.Operations)
	}
	fresh, freshFake := newSyncer(t, opts, nil)
	mustSync(t, fresh, fuzzSnapshot(family, second))
	// Element comments are left out: like upstream's nftElementStorage,
	// the renderer compares an element's key and value only, so an
	// element whose service port was renamed keeps its old comment.
	if got, want := withoutElementComments(sortElements(fake.Dump())), withoutElementComments(sortElements(freshFake.Dump())); got != want {
		t.Fatalf("partial syncs leave a table that differs from a fresh full sync:\n--- fresh\n%s\n--- partial\n%s", want, got)
	}
}

var elementComment = regexp.MustCompile(` comment "[^"]*"`)

func withoutElementComments(dump string) string {
	ls := strings.Split(dump, "\n")
	for i, l := range ls {
		if strings.HasPrefix(l, "add element ") {
			ls[i] = elementComment.ReplaceAllString(l, "")
		}
	}
	return strings.Join(ls, "\n")
}

// sortElements sorts each run of "add element" lines of a Dump: the fake
// keeps elements in insertion order, which differs between a table built
// in one sync and one built in several.
func sortElements(dump string) string {
	ls := strings.Split(dump, "\n")
	for i := 0; i < len(ls); {
		j := i
		for j < len(ls) && strings.HasPrefix(ls[j], "add element ") {
			j++
		}
		if j == i {
			i++
			continue
		}
		slices.Sort(ls[i:j])
		i = j
	}
	return strings.Join(ls, "\n")
}
