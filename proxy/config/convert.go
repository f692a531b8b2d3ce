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

	ms := modeSectionOf(mode, kp)
	for _, p := range ms.problems() {
		fail(p.field, p.value, p.reason)
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
		MasqueradeBit:      ms.masqueradeBit(),
		MasqueradeAll:      ms.masqAll,
		SyncPeriod:         ms.syncPeriod,
		MinSyncPeriod:      max(ms.minSyncPeriod, time.Duration(0)),
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

// modeSection is what upstream's conversion takes from the section of the
// mode in use: the sync periods (iptables, ipvs or nftables) and the
// masquerade settings (nftables', else iptables').
type modeSection struct {
	section, masqSection      string // their names, for errors
	syncPeriod, minSyncPeriod time.Duration
	masqBit                   *int32
	masqAll                   bool
}

func modeSectionOf(mode Mode, kp *kubeproxyconfigv1alpha1.KubeProxyConfiguration) modeSection {
	ms := modeSection{section: "iptables", masqSection: "iptables",
		syncPeriod: kp.IPTables.SyncPeriod.Duration, minSyncPeriod: kp.IPTables.MinSyncPeriod.Duration,
		masqBit: kp.IPTables.MasqueradeBit, masqAll: kp.IPTables.MasqueradeAll}
	switch mode {
	case ModeIPVS:
		ms.section = "ipvs"
		ms.syncPeriod, ms.minSyncPeriod = kp.IPVS.SyncPeriod.Duration, kp.IPVS.MinSyncPeriod.Duration
	case ModeNFTables:
		ms.section, ms.masqSection = "nftables", "nftables"
		ms.syncPeriod, ms.minSyncPeriod = kp.NFTables.SyncPeriod.Duration, kp.NFTables.MinSyncPeriod.Duration
		ms.masqBit, ms.masqAll = kp.NFTables.MasqueradeBit, kp.NFTables.MasqueradeAll
	}
	return ms
}

// masqueradeBit is the section's, else DefaultMasqueradeBit.
func (ms modeSection) masqueradeBit() int {
	if ms.masqBit != nil {
		return int(*ms.masqBit)
	}
	return DefaultMasqueradeBit
}

// sectionProblem is one invalid field of the mode's section.
type sectionProblem struct{ field, value, reason string }

// problems are upstream's checks of the sync periods and the masquerade
// bit.
func (ms modeSection) problems() []sectionProblem {
	var ps []sectionProblem
	if ms.syncPeriod <= 0 {
		ps = append(ps, sectionProblem{ms.section + ".syncPeriod", ms.syncPeriod.String(), "must be greater than 0"})
	}
	if ms.minSyncPeriod < 0 {
		ps = append(ps, sectionProblem{ms.section + ".minSyncPeriod", ms.minSyncPeriod.String(), "must be greater than or equal to 0"})
	}
	if ms.minSyncPeriod > ms.syncPeriod && ms.syncPeriod > 0 {
		ps = append(ps, sectionProblem{ms.section + ".syncPeriod", ms.syncPeriod.String(),
			fmt.Sprintf("must be greater than or equal to %s.minSyncPeriod (%s)", ms.section, ms.minSyncPeriod)})
	}
	if bit := ms.masqueradeBit(); bit < 0 || bit > 31 {
		ps = append(ps, sectionProblem{ms.masqSection + ".masqueradeBit", strconv.Itoa(bit), "must be within the range [0, 31]"})
	}
	return ps
}
