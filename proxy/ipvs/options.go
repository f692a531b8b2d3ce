package ipvs

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// Options are the IPVS mode's settings from the kube-proxy configuration.
type Options struct {
	// Family is the IP family this proxier programs: "" or IPv4 (today's
	// behaviour), or IPv6 for the second proxier of a dual-stack node, as
	// upstream's metaproxier runs one IPVS proxier per family.
	Family corev1.IPFamily
	// Scheduler is ipvs.scheduler ("" means rr).
	Scheduler string
	// ExcludeCIDRs is ipvs.excludeCIDRs, those of Family (upstream's
	// filterCIDRs gives each proxier its family's).
	ExcludeCIDRs []netip.Prefix
	// StrictARP is ipvs.strictARP: arp_ignore=1 and arp_announce=2 on all
	// interfaces, so the node does not answer ARP for kube-ipvs0's
	// addresses.
	StrictARP bool
	// Timeouts are ipvs.tcpTimeout, tcpFinTimeout and udpTimeout (0 keeps
	// the kernel's value).
	Timeouts kernel.Timeouts
	// ClusterCIDR is clusterCIDR's range of Family (invalid when unset).
	ClusterCIDR netip.Prefix
	// MasqueradeBit and MasqueradeAll are iptables.masqueradeBit and
	// iptables.masqueradeAll, which upstream's IPVS mode uses too.
	MasqueradeBit int
	MasqueradeAll bool
	// NodePortCIDRs are nodePortAddresses, those of Family.
	NodePortCIDRs []netip.Prefix
	// NodeIP is the node's primary address of Family: bindAddress when it
	// names one; otherwise the lowest node address of Family is used.
	NodeIP netip.Addr
	// KernelRelease is shown by Describe; "" reads `uname -r`.
	KernelRelease string
}

// schedulerName is what an IPVS scheduler module can be called
// (ip_vs_<name>.ko).
var schedulerName = regexp.MustCompile(`^[a-z0-9_]{1,15}$`)

// OptionsFromConfig takes the IPVS mode's settings for the IPv4 proxier
// from cfg and checks them, naming the field of anything wrong. Every
// field of the ipvs section is implemented; whether the kernel has the
// scheduler is checked by New.
func OptionsFromConfig(cfg config.Config) (Options, error) {
	return OptionsFromConfigFor(cfg, corev1.IPv4Protocol)
}

// OptionsFromConfigFor is OptionsFromConfig for the proxier of family
// (IPv4 or IPv6): the CIDRs and addresses of the configuration that are
// of that family, as upstream's NewDualStackProxier hands each proxier
// its own.
func OptionsFromConfigFor(cfg config.Config, family corev1.IPFamily) (Options, error) {
	if family == "" {
		family = corev1.IPv4Protocol
	}
	if family != corev1.IPv4Protocol && family != corev1.IPv6Protocol {
		return Options{}, fmt.Errorf("ipvs mode: IP family %q: want IPv4 or IPv6", family)
	}
	kp := cfg.Versioned
	if kp == nil {
		kp = &kubeproxyconfigv1alpha1.KubeProxyConfiguration{}
	}
	o := Options{
		Scheduler:     cfg.IPVSScheduler,
		StrictARP:     kp.IPVS.StrictARP,
		MasqueradeBit: cfg.MasqueradeBit,
		MasqueradeAll: cfg.MasqueradeAll,
		Timeouts: kernel.Timeouts{
			TCP:    kp.IPVS.TCPTimeout.Duration,
			TCPFin: kp.IPVS.TCPFinTimeout.Duration,
			UDP:    kp.IPVS.UDPTimeout.Duration,
		},
	}
	if o.Scheduler == "" {
		o.Scheduler = kp.IPVS.Scheduler
	}
	fail := func(field, value, reason string) error {
		return &config.Error{Source: cfg.Source, Field: field, Value: value, Reason: reason}
	}
	var errs []error
	if o.Scheduler != "" && !schedulerName.MatchString(o.Scheduler) {
		errs = append(errs, fail("ipvs.scheduler", o.Scheduler, "not an IPVS scheduler name (rr, wrr, lc, wlc, sh, mh, ...)"))
	}
	for i, s := range kp.IPVS.ExcludeCIDRs {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, fail(fmt.Sprintf("ipvs.excludeCIDRs[%d]", i), s, "not a CIDR (e.g. 10.0.0.0/8)"))
			continue
		}
		if inFamily(family, p.Addr()) {
			o.ExcludeCIDRs = append(o.ExcludeCIDRs, p.Masked())
		}
	}
	for _, t := range []struct {
		field string
		value time.Duration
	}{{"ipvs.tcpTimeout", o.Timeouts.TCP}, {"ipvs.tcpFinTimeout", o.Timeouts.TCPFin}, {"ipvs.udpTimeout", o.Timeouts.UDP}} {
		if reason := checkTimeout(t.value); reason != "" {
			errs = append(errs, fail(t.field, t.value.String(), reason))
		}
	}
	for i, s := range kp.NodePortAddresses {
		if s == "primary" {
			errs = append(errs, fail("nodePortAddresses", s, `"primary" is not implemented by svclab's ipvs mode; list CIDRs instead`))
			continue
		}
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, fail(fmt.Sprintf("nodePortAddresses[%d]", i), s, "not a CIDR (e.g. 192.168.0.0/16)"))
			continue
		}
		if inFamily(family, p.Addr()) {
			o.NodePortCIDRs = append(o.NodePortCIDRs, p.Masked())
		}
	}
	for _, c := range cfg.ClusterCIDRs {
		if inFamily(family, c.Addr()) {
			o.ClusterCIDR = c
		}
	}
	if a, err := netip.ParseAddr(kp.BindAddress); err == nil && inFamily(family, a) && !a.IsUnspecified() {
		o.NodeIP = a
	}
	if len(errs) > 0 {
		return Options{}, errors.Join(errs...)
	}
	if family == corev1.IPv6Protocol {
		o.Family = family // IPv4 stays the zero value, as it always was
	}
	return o, nil
}

// checkTimeout says what is wrong with an IPVS timeout, or "". The kernel
// keeps whole seconds in an int of jiffies.
func checkTimeout(d time.Duration) string {
	switch {
	case d < 0:
		return "must be greater than or equal to 0"
	case d%time.Second != 0:
		return "must be a whole number of seconds (IPVS keeps seconds)"
	case d > 2147483*time.Second:
		return "must be at most 2147483s"
	}
	return ""
}
