package nftables_test

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

// TestIntegrationIPv6TableAgainstTheKernel syncs an IPv6 render into the
// kernel's `table ip6 kube-proxy` (through nft, in a network namespace of
// its own) and reads it back: the same chains, and every set's and map's
// elements the same as a knftables.Fake given the same render holds; nft
// lists the table with IPv6 matches, and no `ip kube-proxy` table exists.
func TestIntegrationIPv6TableAgainstTheKernel(t *testing.T) {
	requireRootAndNFT(t, "creates a network namespace and nftables rules in it")
	c := ipv6GoldenCases()[0]
	opts := ipv6Options()
	snap := model.BuildFamily(corev1.IPv6Protocol, c.services, c.slices, nodeA)
	s, fake := newSyncer(t, opts, nil)
	mustSync(t, s, snap)

	ns := roottest.Netns(t, "svclabnft6")
	roottest.InNetns(t, ns, func() error {
		ctx := context.Background()
		kernel, err := nftables.Open(knftables.IPv6Family)
		if err != nil {
			return err
		}
		r, err := nftables.NewRenderer(opts)
		if err != nil {
			return err
		}
		if _, err := (&nftables.Syncer{NFT: kernel, Renderer: r}).Sync(ctx, snap); err != nil {
			return fmt.Errorf("IPv6 sync into the kernel: %w", err)
		}
		if err := sameChains(ctx, kernel, fake); err != nil {
			return err
		}
		for _, obj := range []string{"set", "map"} {
			names, err := fake.List(ctx, obj)
			if err != nil {
				return err
			}
			for _, name := range names {
				if err := sameElements(ctx, kernel, fake, obj, name); err != nil {
					return err
				}
			}
		}
		tables, err := exec.Command("nft", "list", "tables").CombinedOutput()
		if err != nil {
			return fmt.Errorf("nft list tables: %w: %s", err, tables)
		}
		if got := strings.TrimSpace(string(tables)); got != "table ip6 kube-proxy" {
			return fmt.Errorf("nft list tables = %q, want only table ip6 kube-proxy", got)
		}
		listing, err := exec.Command("nft", "list", "table", "ip6", "kube-proxy").CombinedOutput()
		if err != nil {
			return fmt.Errorf("nft list table ip6 kube-proxy: %w: %s", err, listing)
		}
		for _, want := range []string{"ip6 daddr . meta l4proto . th dport vmap @service-ips", "ip6 saddr != { 2001:db8:ff::10, 2001:db8:100::/48, fd00:192:168::/64 } drop", "fd00:10:96::30 . tcp . 80 : goto service-"} {
			if !strings.Contains(string(listing), want) {
				return fmt.Errorf("nft list table ip6 kube-proxy lacks %q:\n%s", want, listing)
			}
		}
		return nil
	})
}

// sameChains compares the chain names of the kernel's table and the fake's.
func sameChains(ctx context.Context, kernel, fake knftables.Interface) error {
	want, err := fake.List(ctx, "chain")
	if err != nil {
		return err
	}
	got, err := kernel.List(ctx, "chain")
	if err != nil {
		return err
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("kernel chains %v, want the fake's %v", got, want)
	}
	return nil
}

// sameElements compares one set's or map's elements, keys and values.
func sameElements(ctx context.Context, kernel, fake knftables.Interface, obj, name string) error {
	text := func(nft knftables.Interface) ([]string, error) {
		elems, err := nft.ListElements(ctx, obj, name)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, e := range elems {
			out = append(out, strings.Join(e.Key, " . ")+" : "+strings.Join(e.Value, " . "))
		}
		slices.Sort(out)
		return out, nil
	}
	want, err := text(fake)
	if err != nil {
		return err
	}
	got, err := text(kernel)
	if err != nil {
		return fmt.Errorf("%s %s in the kernel: %w", obj, name, err)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s %s: kernel holds %v, want the fake's %v", obj, name, got, want)
	}
	return nil
}
