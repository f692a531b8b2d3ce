package nftables_test

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/nftables"
)

// TestIntegrationTablesFoundWithoutNFT: FindTables and CleanupKernel learn
// from the kernel which kube-proxy tables exist, so a namespace without
// one costs no nft exec (a proxy starting in iptables mode); with tables,
// FindTables names the ip and ip6 ones (not inet's, nor another table of
// those families) still without nft, and CleanupKernel removes exactly
// those two through nft, as upstream's CleanupLeftovers does.
func TestIntegrationTablesFoundWithoutNFT(t *testing.T) {
	roottest.Require(t, "creates a network namespace and nftables tables in it")
	realNFT, err := exec.LookPath("nft")
	if err != nil {
		t.Fatalf("nft not installed (make deps installs nftables): %v", err)
	}
	execs := roottest.RecordExecs(t, "nft", realNFT)
	ns := roottest.Netns(t, "svclabnftt")
	roottest.InNetns(t, ns, func() error {
		ctx := context.Background()
		if found, err := nftables.FindTables(ctx); err != nil || len(found) != 0 {
			return fmt.Errorf("empty namespace: FindTables = %v, %v; want none", found, err)
		}
		if err := nftables.CleanupKernel(ctx); err != nil {
			return fmt.Errorf("empty namespace: CleanupKernel: %w", err)
		}
		if got := execs(); len(got) != 0 {
			return fmt.Errorf("empty namespace: nft ran %q; want no exec", got)
		}

		script := "add table ip kube-proxy\nadd table ip6 kube-proxy\nadd table inet kube-proxy\nadd table ip other\nadd table ip6 kube-proxy-2\n"
		if out, err := runNFT(realNFT, script); err != nil {
			return fmt.Errorf("creating the tables: %v: %s", err, out)
		}
		found, err := nftables.FindTables(ctx)
		if err != nil || !slices.Equal(found, []knftables.Family{knftables.IPv4Family, knftables.IPv6Family}) {
			return fmt.Errorf("FindTables = %v, %v; want [ip ip6]", found, err)
		}
		if got := execs(); len(got) != 0 {
			return fmt.Errorf("FindTables ran nft %q; want no exec", got)
		}
		if err := nftables.CleanupKernel(ctx); err != nil {
			return fmt.Errorf("CleanupKernel: %w", err)
		}
		if got := execs(); len(got) == 0 {
			return fmt.Errorf("CleanupKernel removed the tables without nft")
		}
		out, err := exec.Command(realNFT, "list", "tables").CombinedOutput()
		if err != nil {
			return fmt.Errorf("nft list tables: %v: %s", err, out)
		}
		if got, want := string(out), "table inet kube-proxy\ntable ip other\ntable ip6 kube-proxy-2\n"; got != want {
			return fmt.Errorf("after CleanupKernel the tables are\n%s\nwant\n%s", got, want)
		}
		return nil
	})
}

func runNFT(nft, script string) ([]byte, error) {
	cmd := exec.Command(nft, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	return cmd.CombinedOutput()
}
