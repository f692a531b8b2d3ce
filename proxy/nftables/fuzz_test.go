package nftables_test

import (
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/proxy/model/modeltest"
	"github.com/svclab/svclab/proxy/nftables"
)

// fuzzOptions picks the renderer's options from one byte: the local
// detector, masquerade-all, the masquerade bit, --nodeport-addresses and
// service CIDRs.
func fuzzOptions(b byte) nftables.Options {
	o := nftables.Options{NodeIP: netip.MustParseAddr(modeltest.NodeIP)}
	switch b % 4 {
	case 0:
		o.LocalDetector = nftables.DetectLocalByCIDR(netip.MustParsePrefix(modeltest.ClusterCIDR))
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
		o.NodePortCIDRs = []netip.Prefix{netip.PrefixFrom(o.NodeIP, 32)}
		o.NodePortAddresses = []netip.Addr{o.NodeIP}
	}
	if b&32 != 0 {
		o.ServiceCIDRs = []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12")}
	}
	return o
}

// FuzzRender builds two generated states (modeltest.Generate) and syncs
// them in turn into knftables.Fake, which rejects what nft would (a rule
// or element naming a missing chain, set or map, a duplicate, a bad
// delete). Properties:
//   - no panic, and both syncs are accepted;
//   - determinism: a fresh syncer on a rebuilt snapshot dumps the same;
//   - the partial sync to the second state (plus the later deletion of
//     stale chains) leaves the table a fresh full sync of that state would;
//   - a third sync of the same state runs an empty transaction.
func FuzzRender(f *testing.F) {
	modeltest.AddSeeds(f)
	f.Fuzz(func(t *testing.T, o byte, first, second []byte) {
		opts := fuzzOptions(o)
		clock := newClock()
		s, fake := newSyncer(t, opts, clock)
		mustSync(t, s, modeltest.Snapshot(first))
		again, againFake := newSyncer(t, opts, nil)
		mustSync(t, again, modeltest.Snapshot(first))
		if fake.Dump() != againFake.Dump() {
			t.Fatalf("the same input dumps differently")
		}
		mustSync(t, s, modeltest.Snapshot(second))
		clock.advance(2 * time.Second)
		if res := mustSync(t, s, modeltest.Snapshot(second)); res.Operations != 0 && s.StaleChains() != 0 {
			t.Fatalf("stale chains left after the delay: %d", s.StaleChains())
		}
		if res := mustSync(t, s, modeltest.Snapshot(second)); res.Operations != 0 {
			t.Fatalf("an unchanged state ran %d operations", res.Operations)
		}
		fresh, freshFake := newSyncer(t, opts, nil)
		mustSync(t, fresh, modeltest.Snapshot(second))
		// Element comments are left out: like upstream's nftElementStorage,
		// the renderer compares an element's key and value only, so an
		// element whose service port was renamed keeps its old comment.
		if got, want := withoutElementComments(sortElements(fake.Dump())), withoutElementComments(sortElements(freshFake.Dump())); got != want {
			t.Fatalf("partial syncs leave a table that differs from a fresh full sync:\n--- fresh\n%s\n--- partial\n%s", want, got)
		}
	})
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
