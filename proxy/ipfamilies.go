package proxy

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/config"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/model"
)

// proxyFamilies are the IP families the proxy programs and its node IPs.
type proxyFamilies struct {
	// Primary is the family of the node's primary IP (or bind address).
	Primary corev1.IPFamily
	// Secondary is the other family when the proxy runs dual-stack, empty
	// when single-stack.
	Secondary corev1.IPFamily
	// NodeIPs are the node's IP of each family (loopback when unknown).
	NodeIPs map[corev1.IPFamily]netip.Addr
}

// families is Primary and, when set, Secondary.
func (p proxyFamilies) families() []corev1.IPFamily {
	if p.Secondary == "" {
		return []corev1.IPFamily{p.Primary}
	}
	return []corev1.IPFamily{p.Primary, p.Secondary}
}

// familyChecks are what deciding the families reads from the host, as
// functions so tests can give any answer.
type familyChecks struct {
	// iptablesPresent reports whether the iptables binaries of a family
	// run (upstream: utiliptables.New(family).Present()).
	iptablesPresent func(corev1.IPFamily) error
	// kernelIPv6 reports whether the kernel has IPv6, and why not.
	kernelIPv6 func() (bool, string)
}

// hostFamilyChecks are familyChecks on this host with the iptables
// backend given (legacy, nft or the host's).
func hostFamilyChecks(iptablesBackend string) familyChecks {
	return familyChecks{
		iptablesPresent: func(f corev1.IPFamily) error {
			b, err := iptkernel.ParseBackend(iptablesBackend)
			if err != nil {
				return err
			}
			_, err = iptkernel.NewExecRunner(iptkernel.ExecOptions{Backend: b, Family: f})
			return err
		},
		kernelIPv6: kernelHasIPv6,
	}
}

// kernelHasIPv6 is upstream's check: /proc/net/if_inet6 exists and
// net.ipv6.conf.all.disable_ipv6 is not 1 (in the proxy's own network
// namespace).
func kernelHasIPv6() (bool, string) {
	if _, err := os.Stat("/proc/net/if_inet6"); err != nil {
		return false, "No kernel support for family"
	}
	if data, err := os.ReadFile("/proc/sys/net/ipv6/conf/all/disable_ipv6"); err == nil && strings.TrimSpace(string(data)) == "1" {
		return false, "Kernel support disabled for family"
	}
	return true, ""
}

// decideFamilies decides the proxy's IP families as upstream's
// newProxyServer does:
//
//  1. the node IPs and the primary family (detectNodeIPs) from the node's
//     host IPs and bindAddress;
//  2. which families the mode can program here (platformCheckSupported):
//     the iptables-based modes need the family's iptables binaries, the
//     nftables mode's nft does both; IPv6 needs the kernel's IPv6;
//  3. no support for the primary family is an error; support for both
//     makes the proxy dual-stack, whatever addresses the node has
//     ("kube-proxy normally runs as dual-stack if the backend is capable
//     of supporting both IP families").
//
// labNode narrows step 3 for a lab's node: a lab node is dual-stack only
// when it has an address of the second family (a lab given no node IPs
// is IPv4), so that a single-stack lab's node holds exactly the rules of
// its family, as a single-stack lab always has.
func decideFamilies(mode config.Mode, rawNodeIPs []netip.Addr, bindAddress string, labNode bool, checks familyChecks, log *slog.Logger) (proxyFamilies, error) {
	detectLog := log
	if labNode && len(rawNodeIPs) == 0 {
		// An IPv4 lab does not tell its nodes' proxies their IPs (their
		// command lines stay as they were): not a node of unknown IP.
		detectLog = slog.New(slog.DiscardHandler)
	}
	primary, nodeIPs := detectNodeIPs(rawNodeIPs, bindAddress, detectLog)
	out := proxyFamilies{Primary: primary, NodeIPs: nodeIPs}
	ipv4, ipv6 := true, true
	if mode == config.ModeIPTables || mode == config.ModeIPVS {
		errv4, errv6 := checks.iptablesPresent(corev1.IPv4Protocol), checks.iptablesPresent(corev1.IPv6Protocol)
		ipv4, ipv6 = errv4 == nil, errv6 == nil
		switch {
		case !ipv4 && !ipv6:
			return out, fmt.Errorf("iptables is not available on this host : %w", errv4)
		case !ipv4:
			log.Info("No iptables support for family", "ipFamily", corev1.IPv4Protocol, "error", errv4)
		case !ipv6:
			log.Info("No iptables support for family", "ipFamily", corev1.IPv6Protocol, "error", errv6)
		}
	}
	if ok, why := checks.kernelIPv6(); !ok {
		log.Info(why, "ipFamily", corev1.IPv6Protocol)
		ipv6 = false
	}
	if (primary == corev1.IPv4Protocol && !ipv4) || (primary == corev1.IPv6Protocol && !ipv6) {
		return out, fmt.Errorf("no support for primary IP family %q", primary)
	}
	second := otherFamily(primary)
	dual := ipv4 && ipv6
	if dual && labNode && !hasFamily(rawNodeIPs, second) {
		dual = false
	}
	if dual {
		out.Secondary = second
		log.Info("kube-proxy running in dual-stack mode", "primary ipFamily", primary)
	} else {
		log.Info("kube-proxy running in single-stack mode", "ipFamily", primary)
	}
	return out, nil
}

// hasFamily reports whether one of ips is of family f.
func hasFamily(ips []netip.Addr, f corev1.IPFamily) bool {
	for _, ip := range ips {
		if familyOf(ip) == f {
			return true
		}
	}
	return false
}

// clusterCIDRsOf are the cluster CIDRs of family f (clusterCIDR is a
// comma list, split per family as upstream's MapCIDRsByIPFamily).
func clusterCIDRsOf(cfg config.Config, f corev1.IPFamily) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range cfg.ClusterCIDRs {
		if familyOf(c.Addr()) == f {
			out = append(out, c)
		}
	}
	return out
}

// checkBadIPConfig is upstream's checkBadIPConfig for the settings svclab
// reads: cluster CIDRs that are all of the family the proxy does not run
// are an error, fatal when the proxy is single-stack (detectLocalMode
// ClusterCIDR, the only one svclab implements: it has always been fatal
// upstream); a healthz or metrics bind address of that family is logged
// on a single-stack proxy.
func checkBadIPConfig(cfg config.Config, fams proxyFamilies, log *slog.Logger) error {
	bad := otherFamily(fams.Primary)
	dual := fams.Secondary != ""
	clusterType := string(fams.Primary) + "-only"
	if dual {
		clusterType = string(fams.Primary) + "-primary"
	}
	if len(cfg.ClusterCIDRs) > 0 && len(clusterCIDRsOf(cfg, bad)) == len(cfg.ClusterCIDRs) {
		err := fmt.Errorf("cluster is %s but clusterCIDRs contains only %s addresses", clusterType, bad)
		if !dual {
			return fmt.Errorf("kube-proxy configuration is incorrect: %w", err)
		}
		log.Error("Kube-proxy configuration may be incomplete or incorrect", "err", err)
	}
	if dual {
		return nil
	}
	for _, b := range []struct{ field, addr string }{{"healthzBindAddress", cfg.HealthzBindAddress}, {"metricsBindAddress", cfg.MetricsBindAddress}} {
		host, _, _ := net.SplitHostPort(b.addr)
		if ip, ok := model.ParseAddrSloppy(host); ok && !ip.IsUnspecified() && familyOf(ip) == bad {
			log.Error("Kube-proxy configuration may be incomplete or incorrect", "err", fmt.Errorf("cluster is %s but %s is %s", clusterType, b.field, bad))
		}
	}
	return nil
}
