package nftables_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

const (
	nodeA = "node-a"
	nodeB = "node-b"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *fakeClock                   { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func family(o nftables.Options) knftables.Family {
	if o.Family == corev1.IPv6Protocol {
		return knftables.IPv6Family
	}
	return knftables.IPv4Family
}

// newSyncer is a Syncer over a fresh knftables.Fake.
func newSyncer(t *testing.T, opts nftables.Options, clock *fakeClock) (*nftables.Syncer, *knftables.Fake) {
	t.Helper()
	r, err := nftables.NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	fake := knftables.NewFake(family(opts), nftables.TableName)
	s := &nftables.Syncer{NFT: fake, Renderer: r}
	if clock != nil {
		s.Now = clock.now
	}
	return s, fake
}

func mustSync(t *testing.T, s *nftables.Syncer, snap *model.Snapshot) nftables.Result {
	t.Helper()
	res, err := s.Sync(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// lines counts the lines of s that start with prefix.
func lines(s, prefix string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// requireRootAndNFT skips a test that needs root (why says what for)
// without it, and fails one whose machine has no nft.
func requireRootAndNFT(t testing.TB, why string) {
	t.Helper()
	roottest.Require(t, why)
	if _, err := exec.LookPath("nft"); err != nil {
		t.Fatalf("nft not installed (make deps installs nftables): %v", err)
	}
}
