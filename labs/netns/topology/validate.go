package topology

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks a typed lab and returns every problem found, each an
// *Error naming the field, joined one per line (errors.Join: errors.As
// finds the first), or nil. Parse and Load call it; call it yourself for a
// Lab built in code. An empty Proxy.Mode counts as iptables here.
//
// Validate first completes the lab's per-family lists (complete.go): it
// sets PodSubnets, ServiceSubnets and each host's IPs and PodCIDRs from
// the single fields, defaults and derivations, one value per family of
// the lab, so a lab built in code may set only the single fields. On a
// lab it completed already it changes nothing.
func (l *Lab) Validate() error {
	p := newProblems(l.Source)
	validate(l, p)
	return p.err()
}

// validate runs the checks of a lab in the order of a lab file's fields
// and records what they find in p, which may hold convert's problems
// already (a field with one is not checked again).
func validate(l *Lab, p *problems) {
	v := validator{p, &written{}}
	v.header(l)
	v.cni(l.Spec.CNI)
	v.complete(&l.Spec)
	v.addressPlan(&l.Spec)
	v.proxy(l.Spec.Proxy)
	hostSubnets := v.hosts(&l.Spec)
	v.routedBlocks(&l.Spec, hostSubnets)
}

// A validator runs the checks of one lab. Each check records its problems
// and returns; none stops the others.
type validator struct {
	*problems
	written *written
}

// written is what the lab wrote before complete made it one value per
// family: an ipv6 lab's IPv4 pod subnet, which its nodes' IPv6 ranges
// are derived by.
type written struct {
	podSubnets []netip.Prefix
}

// ok says whether field passed its checks (or has none yet): a check that
// compares with another field skips one that failed.
func (v validator) ok(field string) bool { return !v.reported(field) }

// header checks apiVersion, kind and metadata.name.
func (v validator) header(l *Lab) {
	switch l.APIVersion {
	case APIVersion:
	case "":
		v.add("apiVersion", "", "required (want %q)", APIVersion)
	default:
		v.add("apiVersion", l.APIVersion, "unknown (want %q)", APIVersion)
	}
	switch l.Kind {
	case Kind:
	case "":
		v.add("kind", "", "required (want %q)", Kind)
	default:
		v.add("kind", l.Kind, "unknown (want %q)", Kind)
	}
	v.name("metadata.name", l.Metadata.Name, MaxLabNameLen)
}

// cni checks spec.cni: one of the known flavours.
func (v validator) cni(c CNI) {
	switch {
	case c == "":
		v.add("spec.cni", "", "required (one of %s)", list(CNIs()))
	case !slices.Contains(CNIs(), c):
		v.add("spec.cni", string(c), "unknown CNI (one of %s)", list(CNIs()))
	}
}

// addressPlan checks the cluster's pod and service subnets, family by
// family: network addresses, room for the nodes' ranges and for
// kube-dns's Service address, and apart.
func (v validator) addressPlan(s *Spec) {
	for _, p := range s.PodSubnets {
		if v.planSubnet("spec.podSubnet", p) && p.Addr().Is6() {
			v.podSubnetIPv6(p)
		}
	}
	for _, svc := range s.ServiceSubnets {
		if !v.planSubnet("spec.serviceSubnet", svc) {
			return
		}
		pods := OfFamily(s.PodSubnets, FamilyOf(svc.Addr()))
		switch {
		case svc.Bits() > maxServiceSubnetBits(svc):
			v.add("spec.serviceSubnet", svc.String(), "too small: the lab's kube-dns Service takes its tenth address (kubeadm's DNS IP); want a /%d or larger", maxServiceSubnetBits(svc))
		case svc.Addr().Is6() && svc.Bits() < MinServiceSubnetBitsIPv6:
			v.add("spec.serviceSubnet", svc.String(), "too large: kube-apiserver takes an IPv6 Service range of at most 20 bits (a /%d)", MinServiceSubnetBitsIPv6)
		case v.ok("spec.podSubnet") && pods.Overlaps(svc):
			v.add("spec.serviceSubnet", svc.String(), "overlaps spec.podSubnet %s", pods)
		}
	}
}

// podSubnetIPv6 checks the size of an IPv6 pod subnet: nodes get /64s of
// it (kube-controller-manager's default node-cidr-mask-size-ipv6), and
// kube-controller-manager's range allocator takes at most 16 bits between
// the cluster's and a node's mask.
func (v validator) podSubnetIPv6(p netip.Prefix) {
	switch {
	case p.Bits() > NodePodCIDRBitsIPv6:
		v.add("spec.podSubnet", p.String(), "too small: each node gets a /%d of it (kube-controller-manager's node-cidr-mask-size-ipv6)", NodePodCIDRBitsIPv6)
	case p.Bits() < NodePodCIDRBitsIPv6-16:
		v.add("spec.podSubnet", p.String(), "too large: kube-controller-manager allows at most 16 bits between it and a node's /%d (want a /%d or longer)", NodePodCIDRBitsIPv6, NodePodCIDRBitsIPv6-16)
	}
}

// maxServiceSubnetBits is the longest Service range of p's family.
func maxServiceSubnetBits(p netip.Prefix) int {
	if p.Addr().Is6() {
		return MaxServiceSubnetBitsIPv6
	}
	return MaxServiceSubnetBits
}

// planSubnets are the pod and service subnets that passed their checks,
// both families, for the checks that nothing else of the lab overlaps
// them.
func (v validator) planSubnets(s *Spec) []declared {
	var out []declared
	for _, field := range []struct {
		name string
		list []netip.Prefix
	}{{"spec.podSubnet", s.PodSubnets}, {"spec.serviceSubnet", s.ServiceSubnets}} {
		if !v.ok(field.name) {
			continue
		}
		for _, p := range field.list {
			out = append(out, declared{p, field.name})
		}
	}
	return out
}

// proxy checks spec.proxy: a known mode and iptables backend.
func (v validator) proxy(p Proxy) {
	if p.Mode != "" && !slices.Contains(ProxyModes(), p.Mode) {
		v.add("spec.proxy.mode", string(p.Mode), "unknown proxy mode (one of %s, or empty for iptables)", list(ProxyModes()))
	}
	if !slices.Contains(IPTablesBackends(), p.IPTablesBackend) {
		v.add("spec.proxy.iptablesBackend", string(p.IPTablesBackend), `unknown backend (one of "legacy", "nft", or empty for the host's default)`)
	}
}

// name checks a DNS label (RFC 1123) of at most max characters.
func (v validator) name(field, name string, max int) bool {
	if problem := labelProblem(name, max); problem != "" {
		v.add(field, name, "%s", problem)
		return false
	}
	return true
}

// labelProblem says what is wrong with name as a DNS-1123 label of at most
// max characters (apimachinery's IsDNS1123Label), or "".
func labelProblem(name string, max int) string {
	switch {
	case name == "":
		return "required"
	case len(name) > max:
		return fmt.Sprintf("too long: %d characters, at most %d", len(name), max)
	case len(validation.IsDNS1123Label(name)) > 0:
		return "not a DNS label: use lower-case letters, digits and '-', starting and ending with a letter or digit"
	}
	return ""
}

// ValidateLabName checks a lab name given on the command line (--name,
// --lab) as metadata.name is checked in a lab file: a DNS-1123 label of at
// most MaxLabNameLen characters. Nothing that names a file or a namespace
// after a lab may be called with a name that fails it, so ".." or "a/b"
// never reach a path.
func ValidateLabName(name string) error {
	if problem := labelProblem(name, MaxLabNameLen); problem != "" {
		return fmt.Errorf("lab name %q: %s", name, problem)
	}
	return nil
}

// subnet checks a required IPv4 network prefix; a field convert could not
// parse fails without a second problem.
func (v validator) subnet(field string, p netip.Prefix) bool {
	return v.networkPrefix(field, p, false)
}

// planSubnet checks a required network prefix of either family (complete
// has checked that the lab has its family).
func (v validator) planSubnet(field string, p netip.Prefix) bool {
	return v.networkPrefix(field, p, true)
}

// networkPrefix checks a required network prefix, of IPv4 or, when ipv6
// is true, of either family.
func (v validator) networkPrefix(field string, p netip.Prefix, ipv6 bool) bool {
	switch {
	case v.cantParse(field), v.reported(field):
	case !p.IsValid():
		v.add(field, "", "required (a CIDR such as 10.244.0.0/16)")
	case !p.Addr().Is4() && !ipv6:
		v.add(field, p.String(), "only IPv4 is supported")
	case p.Addr().Is4In6():
		v.add(field, p.String(), "an IPv4-mapped IPv6 prefix: write the IPv4 one")
	case p != p.Masked():
		v.add(field, p.String(), "not a network address (did you mean %s?)", p.Masked())
	default:
		return true
	}
	return false
}

func list[T ~string](items []T) string {
	q := make([]string, 0, len(items))
	for _, it := range items {
		q = append(q, fmt.Sprintf("%q", string(it)))
	}
	return strings.Join(q, ", ")
}

// MaxServiceSubnetBits is the longest prefix of a lab's serviceSubnet: a
// /28 holds the kube-dns Service's tenth address and a few Services more.
const MaxServiceSubnetBits = 28

// MaxServiceSubnetBitsIPv6 is the longest prefix of an IPv6 serviceSubnet
// (room for the tenth address, as MaxServiceSubnetBits), and
// MinServiceSubnetBitsIPv6 the shortest (kube-apiserver refuses an IPv6
// service-cluster-ip-range of more than 20 bits).
const (
	MaxServiceSubnetBitsIPv6 = 124
	MinServiceSubnetBitsIPv6 = 108
)
