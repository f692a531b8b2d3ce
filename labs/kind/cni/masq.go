package cni

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/svclab/svclab/labs/podnet"
)

// masqRules are the NAT rules the variant's real agent installs, so that
// pod traffic leaving the pod network (to a node, to the API server behind
// kube-proxy's DNAT) comes back the way it went (kind's nodes filter
// reverse paths strictly):
//
//   - flannel-vxlan: flanneld --ip-masq's FLANNEL-POSTRTG (and its
//     FLANNEL-FWD accepts), as labs/netns/network renders them;
//   - calico-proxyarp: Felix's natOutgoing for the pool (cali-nat-outgoing).
//
// 0x4000/0x4000 is kube-proxy's masquerade mark: it masquerades those itself.
func masqRules(variant, cluster, podCIDR string) (rules string, jumps [][]string) {
	switch variant {
	case FlannelVXLAN:
		return podnet.FlannelMasqRules(cluster, podCIDR), [][]string{
			{"-t", "nat", "-D", "POSTROUTING", "-m", "comment", "--comment", "flanneld masq", "-j", "FLANNEL-POSTRTG"},
			{"-t", "filter", "-D", "FORWARD", "-m", "comment", "--comment", "flanneld forward", "-j", "FLANNEL-FWD"},
		}
	case CalicoProxyARP:
		return podnet.CalicoNATOutgoingRules(cluster), [][]string{
			{"-t", "nat", "-D", "POSTROUTING", "-m", "comment", "--comment", "svclab: calico natOutgoing", "-j", "cali-nat-outgoing"},
		}
	}
	return "", nil
}

// applyMasq installs the rules with the node's own iptables (the agent's
// image has none: the node's root is mounted at hostRoot), removing the
// jumps an earlier agent added first so that they are never doubled. An
// IPv6 cluster CIDR gets flanneld's IPv6 rules (masqIP6Rules) through the
// node's ip6tables.
func applyMasq(ctx context.Context, hostRoot, variant, cluster, podCIDR string) error {
	rules, jumps := masqRules(variant, cluster, podCIDR)
	iptables, restore := "/usr/sbin/iptables", "/usr/sbin/iptables-restore"
	if strings.Contains(cluster, ":") {
		if variant != FlannelVXLAN {
			return fmt.Errorf("cni %q: no IPv6 masquerade rules", variant)
		}
		rules = podnet.FlannelMasqIP6Rules(cluster, podCIDR)
		iptables, restore = "/usr/sbin/ip6tables", "/usr/sbin/ip6tables-restore"
	}
	if rules == "" {
		return nil
	}
	for _, j := range jumps {
		for i := 0; i < 10; i++ {
			if hostCommand(ctx, hostRoot, append([]string{iptables, "-w", "5"}, j...)...).Run() != nil {
				break
			}
		}
	}
	cmd := hostCommand(ctx, hostRoot, restore, "-w", "5", "--noflush")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chroot %s %s -w 5 --noflush: %v: %s", hostRoot, filepath.Base(restore), err, out)
	}
	return nil
}

// hostCommand runs a program of the node's (argv[0] is its path there)
// chrooted into hostRoot: the agent's image has no iptables.
func hostCommand(ctx context.Context, hostRoot string, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: hostRoot}
	cmd.Dir = "/"
	return cmd
}
