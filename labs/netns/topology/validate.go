package topology

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/svclab/svclab/labs/podnet"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks a typed lab and returns the first problem found, as an
// *Error naming the field. Parse and Load call it; call it yourself for a
// Lab built in code. An empty Proxy.Mode counts as iptables here.
func (l *Lab) Validate() error {
	v := validator{source: l.Source}
	return v.lab(l)
}

type validator struct{ source string }

func (v validator) err(field, value, format string, args ...any) error {
	return fieldErr(v.source, field, value, format, args...)
}

func (v validator) lab(l *Lab) error {
	switch l.APIVersion {
	case APIVersion:
	case "":
		return v.err("apiVersion", "", "required (want %q)", APIVersion)
	default:
		return v.err("apiVersion", l.APIVersion, "unknown (want %q)", APIVersion)
	}
	switch l.Kind {
	case Kind:
	case "":
		return v.err("kind", "", "required (want %q)", Kind)
	default:
		return v.err("kind", l.Kind, "unknown (want %q)", Kind)
	}
	if err := v.name("metadata.name", l.Metadata.Name, MaxLabNameLen); err != nil {
		return err
	}
	s := &l.Spec
	if s.CNI == "" {
		return v.err("spec.cni", "", "required (one of %s)", list(CNIs()))
	}
	if !slices.Contains(CNIs(), s.CNI) {
		return v.err("spec.cni", string(s.CNI), "unknown CNI (one of %s)", list(CNIs()))
	}
	if err := v.subnet("spec.podSubnet", s.PodSubnet); err != nil {
		return err
	}
	if err := v.subnet("spec.serviceSubnet", s.ServiceSubnet); err != nil {
		return err
	}
	if s.ServiceSubnet.Bits() > MaxServiceSubnetBits {
		return v.err("spec.serviceSubnet", s.ServiceSubnet.String(), "too small: the lab's kube-dns Service takes its tenth address (kubeadm's DNS IP); want a /%d or larger", MaxServiceSubnetBits)
	}
	if s.PodSubnet.Overlaps(s.ServiceSubnet) {
		return v.err("spec.serviceSubnet", s.ServiceSubnet.String(), "overlaps spec.podSubnet %s", s.PodSubnet)
	}
	if s.Proxy.Mode != "" && !slices.Contains(ProxyModes(), s.Proxy.Mode) {
		return v.err("spec.proxy.mode", string(s.Proxy.Mode), "unknown proxy mode (one of %s, or empty for iptables)", list(ProxyModes()))
	}
	if !slices.Contains(IPTablesBackends(), s.Proxy.IPTablesBackend) {
		return v.err("spec.proxy.iptablesBackend", string(s.Proxy.IPTablesBackend), `unknown backend (one of "legacy", "nft", or empty for the host's default)`)
	}
	if len(s.Nodes) == 0 {
		return v.err("spec.nodes", "", "at least one node is required")
	}

	if n := len(s.Nodes) + len(s.Clients); n > MaxHosts {
		return v.err("spec", "", "too many hosts: %d nodes and %d clients, at most %d in all", len(s.Nodes), len(s.Clients), MaxHosts)
	}

	// Every check below is a map lookup (prefixSet costs at most 33
	// lookups), so validation is linear in the number of hosts.
	hosts := len(s.Nodes) + len(s.Clients)
	names := make(map[string]string, hosts)     // host name -> field that declared it
	addrs := make(map[netip.Addr]string, hosts) // host address -> field that declared it
	hostSubnets := newPrefixSet(hosts)          // distinct host subnets, first declaration wins
	perSubnet := map[netip.Prefix]int{}
	host := func(path, name string, ip netip.Prefix) error {
		if err := v.name(path+".name", name, MaxHostNameLen); err != nil {
			return err
		}
		if name == RouterName {
			return v.err(path+".name", name, "reserved for the lab's edge router")
		}
		if prev, ok := names[name]; ok {
			return v.err(path+".name", name, "duplicate name (already used by %s)", prev)
		}
		names[name] = path + ".name"
		if err := v.hostIP(path+".ip", ip); err != nil {
			return err
		}
		if prev, ok := addrs[ip.Addr()]; ok {
			return v.err(path+".ip", ip.String(), "duplicate address (already used by %s)", prev)
		}
		addrs[ip.Addr()] = path + ".ip"
		subnet := ip.Masked()
		for _, other := range []struct {
			field string
			p     netip.Prefix
		}{{"spec.podSubnet", s.PodSubnet}, {"spec.serviceSubnet", s.ServiceSubnet}} {
			if subnet.Overlaps(other.p) {
				return v.err(path+".ip", ip.String(), "subnet %s overlaps %s %s", subnet, other.field, other.p)
			}
		}
		if _, shared := hostSubnets.exact[subnet]; !shared {
			if hs, clash := hostSubnets.overlap(subnet); clash {
				return v.err(path+".ip", ip.String(), "subnet %s overlaps subnet %s of %s (hosts share a subnet only with the same prefix)", subnet, hs.prefix, hs.field)
			}
			hostSubnets.add(subnet, path+".ip")
		}
		if perSubnet[subnet]++; perSubnet[subnet] > MaxHostsPerSubnet {
			return v.err(path+".ip", ip.String(), "subnet %s has more than %d hosts: each is a port of the router's bridge for that subnet, and a Linux bridge has at most %d ports", subnet, MaxHostsPerSubnet, MaxHostsPerSubnet)
		}
		if usable := 1<<(32-subnet.Bits()) - 2; perSubnet[subnet] >= usable {
			return v.err(path+".ip", ip.String(), "subnet %s has %d usable addresses and its hosts take them all: the lab's router needs one for the hosts' gateway", subnet, usable)
		}
		return nil
	}

	podCIDRs := newPrefixSet(len(s.Nodes))
	for i, n := range s.Nodes {
		path := fmt.Sprintf("spec.nodes[%d]", i)
		if err := host(path, n.Name, n.IP); err != nil {
			return err
		}
		field := path + ".podCIDR"
		if err := v.podCIDR(field, n.PodCIDR, s.PodSubnet); err != nil {
			return err
		}
		if other, clash := podCIDRs.overlap(n.PodCIDR); clash {
			return v.err(field, n.PodCIDR.String(), "overlaps %s %s", other.field, other.prefix)
		}
		podCIDRs.add(n.PodCIDR, field)
	}
	for i, c := range s.Clients {
		if err := host(fmt.Sprintf("spec.clients[%d]", i), c.Name, c.IP); err != nil {
			return err
		}
	}
	return v.routedBlocks(s, hostSubnets)
}

// A declared is a prefix and the field that declared it.
type declared struct {
	prefix netip.Prefix
	field  string
}

// prefixSet holds pairwise disjoint IPv4 prefixes and finds the one a new
// prefix overlaps in at most 33 map lookups: two prefixes overlap exactly
// when one contains the other, so it looks for an inserted prefix among the
// new one's ancestors (and itself), then for the new one among the
// ancestors of inserted prefixes. Answers are those of a scan in
// declaration order: the containing prefix is unique (the set is
// disjoint), and below records the first prefix declared under each
// ancestor.
type prefixSet struct {
	exact map[netip.Prefix]declared
	below map[netip.Prefix]declared
}

// newPrefixSet returns an empty set sized for n prefixes.
func newPrefixSet(n int) *prefixSet {
	return &prefixSet{exact: make(map[netip.Prefix]declared, n), below: make(map[netip.Prefix]declared, 2*n)}
}

// overlap returns the inserted prefix that p overlaps, if any. Walking
// down p's ancestors it stops at the first one with nothing inserted below
// it: no inserted prefix can lie further down that path.
func (s *prefixSet) overlap(p netip.Prefix) (declared, bool) {
	for bits := 0; bits <= p.Bits(); bits++ {
		a := netip.PrefixFrom(p.Addr(), bits).Masked()
		if d, ok := s.exact[a]; ok {
			return d, true
		}
		if _, more := s.below[a]; !more {
			return declared{}, false
		}
	}
	d, ok := s.below[p.Masked()]
	return d, ok
}

// add inserts p, which must overlap nothing in s. It records p under its
// ancestors from the nearest up, and stops at the first one already
// recorded (every ancestor of that one is recorded too, with an earlier
// prefix).
func (s *prefixSet) add(p netip.Prefix, field string) {
	d := declared{p.Masked(), field}
	s.exact[d.prefix] = d
	for bits := p.Bits() - 1; bits >= 0; bits-- {
		a := netip.PrefixFrom(p.Addr(), bits).Masked()
		if _, seen := s.below[a]; seen {
			return
		}
		s.below[a] = d
	}
}

// name checks a DNS label (RFC 1123) of at most max characters.
func (v validator) name(field, name string, max int) error {
	if problem := labelProblem(name, max); problem != "" {
		return v.err(field, name, "%s", problem)
	}
	return nil
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

// subnet checks a required IPv4 network prefix.
func (v validator) subnet(field string, p netip.Prefix) error {
	switch {
	case !p.IsValid():
		return v.err(field, "", "required (a CIDR such as 10.244.0.0/16)")
	case !p.Addr().Is4():
		return v.err(field, p.String(), "only IPv4 is supported")
	case p != p.Masked():
		return v.err(field, p.String(), "not a network address (did you mean %s?)", p.Masked())
	}
	return nil
}

// podCIDR checks a node's pod range: a network address inside podSubnet,
// with room for the overlay address (.0), the gateway (.1) and pods.
func (v validator) podCIDR(field string, p, podSubnet netip.Prefix) error {
	if err := v.subnet(field, p); err != nil {
		return err
	}
	if p.Bits() > 30 {
		return v.err(field, p.String(), "too small: at most /30")
	}
	if p.Bits() < podSubnet.Bits() || !podSubnet.Contains(p.Addr()) {
		return v.err(field, p.String(), "not inside spec.podSubnet %s", podSubnet)
	}
	return nil
}

// hostIP checks a node or client address: IPv4, with a subnet that leaves
// room for the router's gateway, and not the subnet's network or broadcast
// address.
func (v validator) hostIP(field string, p netip.Prefix) error {
	switch {
	case !p.IsValid():
		return v.err(field, "", "required (an address with its prefix length, e.g. 192.168.16.73/20)")
	case !p.Addr().Is4():
		return v.err(field, p.String(), "only IPv4 is supported")
	case p.Bits() > 30:
		return v.err(field, p.String(), "prefix too long: at most /30, the router needs an address on this subnet")
	case p.Addr() == p.Masked().Addr():
		return v.err(field, p.String(), "is the subnet's network address")
	case p.Addr() == podnet.Broadcast(p):
		return v.err(field, p.String(), "is the subnet's broadcast address")
	}
	return nil
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
