package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
)

// convert validates the defaulted document and builds a Config from it.
// It collects every problem it finds rather than stopping at the first.
func convert(source string, kp *kubeproxyconfigv1alpha1.KubeProxyConfiguration) (Config, error) {
	var errs []error
	fail := func(field, value, reason string) {
		errs = append(errs, &Error{Source: source, Field: field, Value: value, Reason: reason})
	}

	mode, err := parseMode(source, string(kp.Mode))
	if err != nil {
		errs = append(errs, err)
	}

	// Upstream's conversion takes the sync periods and masquerade settings
	// from the section of the mode in use.
	section := "iptables"
	syncPeriod, minSyncPeriod := kp.IPTables.SyncPeriod.Duration, kp.IPTables.MinSyncPeriod.Duration
	masqBit, masqAll := kp.IPTables.MasqueradeBit, kp.IPTables.MasqueradeAll
	switch mode {
	case ModeIPVS:
		section = "ipvs"
		syncPeriod, minSyncPeriod = kp.IPVS.SyncPeriod.Duration, kp.IPVS.MinSyncPeriod.Duration
	case ModeNFTables:
		section = "nftables"
		syncPeriod, minSyncPeriod = kp.NFTables.SyncPeriod.Duration, kp.NFTables.MinSyncPeriod.Duration
		masqBit, masqAll = kp.NFTables.MasqueradeBit, kp.NFTables.MasqueradeAll
	}
	masqSection := "iptables"
	if mode == ModeNFTables {
		masqSection = "nftables"
	}

	if syncPeriod <= 0 {
		fail(section+".syncPeriod", syncPeriod.String(), "must be greater than 0")
	}
	if minSyncPeriod < 0 {
		fail(section+".minSyncPeriod", minSyncPeriod.String(), "must be greater than or equal to 0")
	}
	if minSyncPeriod > syncPeriod && syncPeriod > 0 {
		fail(section+".syncPeriod", syncPeriod.String(),
			fmt.Sprintf("must be greater than or equal to %s.minSyncPeriod (%s)", section, minSyncPeriod))
	}

	bit := DefaultMasqueradeBit
	if masqBit != nil {
		bit = int(*masqBit)
	}
	if bit < 0 || bit > 31 {
		fail(masqSection+".masqueradeBit", strconv.Itoa(bit), "must be within the range [0, 31]")
	}

	cidrs, cidrErr := parseClusterCIDRs(kp.ClusterCIDR)
	if cidrErr != "" {
		fail("clusterCIDR", kp.ClusterCIDR, cidrErr)
	}

	if _, err := netip.ParseAddr(kp.BindAddress); err != nil {
		fail("bindAddress", kp.BindAddress, "must be an IP address")
	}
	if reason := checkHostPort(kp.MetricsBindAddress); reason != "" {
		fail("metricsBindAddress", kp.MetricsBindAddress, reason)
	}
	if reason := checkHostPort(kp.HealthzBindAddress); reason != "" {
		fail("healthzBindAddress", kp.HealthzBindAddress, reason)
	}

	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return Config{
		Source:             source,
		Mode:               mode,
		ClusterCIDRs:       cidrs,
		MasqueradeBit:      bit,
		MasqueradeAll:      masqAll,
		SyncPeriod:         syncPeriod,
		MinSyncPeriod:      max(minSyncPeriod, time.Duration(0)),
		LocalhostNodePorts: kp.IPTables.LocalhostNodePorts == nil || *kp.IPTables.LocalhostNodePorts,
		NodePortAddresses:  kp.NodePortAddresses,
		MetricsBindAddress: kp.MetricsBindAddress,
		HealthzBindAddress: kp.HealthzBindAddress,
		IPVSScheduler:      kp.IPVS.Scheduler,
		Versioned:          kp,
	}, nil
}

// parseClusterCIDRs splits clusterCIDR ("10.244.0.0/16" or a dual-stack
// pair "10.244.0.0/16,fd00:10:244::/56"). It returns the reason the value
// is wrong, or "".
func parseClusterCIDRs(raw string) ([]netip.Prefix, string) {
	if strings.TrimSpace(raw) == "" {
		return nil, ""
	}
	parts := strings.Split(raw, ",")
	if len(parts) > 2 {
		return nil, "must be one CIDR or a dual-stack pair of CIDRs (e.g. 10.244.0.0/16,fd00:10:244::/56)"
	}
	var prefixes []netip.Prefix
	for _, p := range parts {
		prefix, err := netip.ParsePrefix(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Sprintf("%q is not a CIDR (e.g. 10.244.0.0/16)", strings.TrimSpace(p))
		}
		prefixes = append(prefixes, prefix.Masked())
	}
	if len(prefixes) == 2 && prefixes[0].Addr().Is4() == prefixes[1].Addr().Is4() {
		return nil, "a pair of CIDRs must be one IPv4 and one IPv6"
	}
	return prefixes, ""
}

// checkHostPort returns why addr is not IP:port, or "".
func checkHostPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "must be IP:port"
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return fmt.Sprintf("host %q must be an IP address", host)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Sprintf("port %q must be within 1..65535", port)
	}
	return ""
}
