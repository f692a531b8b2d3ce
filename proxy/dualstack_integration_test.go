package proxy

import (
	"fmt"
	"log/slog"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/model"
)

// dualStackNetns is a fresh network namespace whose node has an IPv4 and
// an IPv6 address.
func dualStackNetns(t *testing.T) string {
	t.Helper()
	ns := roottest.Netns(t, "svclabdual")
	run(t, "ip", "-n", ns, "link", "add", "v0", "type", "veth", "peer", "name", "v1")
	run(t, "ip", "-n", ns, "addr", "add", "192.168.0.10/24", "dev", "v0")
	run(t, "ip", "-n", ns, "addr", "add", "fd00:192::10/64", "dev", "v0", "nodad")
	run(t, "ip", "-n", ns, "link", "set", "v0", "up")
	run(t, "ip", "-n", ns, "link", "set", "v1", "up")
	return ns
}

// inNetns runs name args in ns and returns its output.
func inNetns(ns, name string, args ...string) string {
	out, _ := exec.Command("ip", append([]string{"netns", "exec", ns, name}, args...)...).CombinedOutput()
	return string(out)
}

// startAndSyncDualStack decides the families of a dual-stack lab node in
// mode, builds its backends and syncs each with its family's snapshot of
// dualStackObjects, in the calling thread's network namespace.
func startAndSyncDualStack(mode config.Mode) error {
	log := slog.New(slog.DiscardHandler)
	cfg, err := config.Parse("config.conf", []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: "+string(mode)+"\nclusterCIDR: 10.244.0.0/16,fd00:10:244::/56\n"))
	if err != nil {
		return err
	}
	nodeIPs := []netip.Addr{netip.MustParseAddr("192.168.0.10"), netip.MustParseAddr("fd00:192::10")}
	fams, err := decideFamilies(cfg.Mode, nodeIPs, "", true, hostFamilyChecks(""), log)
	if err != nil {
		return err
	}
	if fams.Secondary != corev1.IPv6Protocol {
		return fmt.Errorf("%s mode on a dual-stack node runs %v, want IPv4 and IPv6", mode, fams.families())
	}
	backends, err := newBackends(cfg, "", fams, log)
	if err != nil {
		return err
	}
	objs := dualStackObjects()
	for _, b := range backends {
		if _, err := b.Backend.Sync(model.BuildFamily(b.Family, objs.Services, objs.EndpointSlices, "n1")); err != nil {
			return fmt.Errorf("%s sync: %w", b.Family, err)
		}
	}
	return nil
}

// TestIntegrationDualStackNFTables: on a node with IPv4 and IPv6
// addresses the nftables mode writes table ip kube-proxy and table ip6
// kube-proxy, each with its family's ClusterIP, and the cleanup a proxy
// in another mode does at start removes both.
func TestIntegrationDualStackNFTables(t *testing.T) {
	roottest.Require(t, "creates a network namespace and nftables rules in it")
	ns := dualStackNetns(t)
	roottest.InNetns(t, ns, func() error { return startAndSyncDualStack(config.ModeNFTables) })
	for _, want := range []string{"table ip kube-proxy", "table ip6 kube-proxy", "10.96.0.11", "fd00:10:96::b", "fd00:10:244:1::5 . 8080"} {
		if out := nft(t, ns); !strings.Contains(out, want) {
			t.Errorf("after a dual-stack sync the ruleset lacks %q:\n%s", want, out)
		}
	}
	roottest.InNetns(t, ns, func() error {
		cleanUpOtherModes(config.ModeIPTables, "", slog.New(slog.DiscardHandler))
		return nil
	})
	if out := nft(t, ns); strings.Contains(out, "kube-proxy") {
		t.Errorf("the iptables mode's start left kube-proxy tables:\n%s", out)
	}
}

// TestIntegrationDualStackIPTables: on a node with IPv4 and IPv6
// addresses the iptables mode writes iptables and ip6tables rules, each
// with its family's ClusterIP, and the cleanup a proxy in nftables mode
// does at start removes the KUBE- chains of both (but kubelet's
// KUBE-FIREWALL, which upstream's cleanup leaves too).
func TestIntegrationDualStackIPTables(t *testing.T) {
	roottest.Require(t, "creates a network namespace and iptables rules in it")
	ns := dualStackNetns(t)
	roottest.InNetns(t, ns, func() error { return startAndSyncDualStack(config.ModeIPTables) })
	if out := inNetns(ns, "iptables-save", "-t", "nat"); !strings.Contains(out, "-d 10.96.0.11/32") || strings.Contains(out, "fd00:") {
		t.Errorf("iptables nat after a dual-stack sync:\n%s", out)
	}
	if out := inNetns(ns, "ip6tables-save", "-t", "nat"); !strings.Contains(out, "-d fd00:10:96::b/128") || !strings.Contains(out, "--to-destination [fd00:10:244:1::5]:8080") || strings.Contains(out, "10.96.0.11") {
		t.Errorf("ip6tables nat after a dual-stack sync:\n%s", out)
	}
	roottest.InNetns(t, ns, func() error {
		cleanUpOtherModes(config.ModeNFTables, "", slog.New(slog.DiscardHandler))
		return nil
	})
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		out := inNetns(ns, save)
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "KUBE-") && !strings.Contains(line, "KUBE-FIREWALL") {
				t.Errorf("the nftables mode's start left in %s: %s", save, line)
			}
		}
	}
}
