package topology

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

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

	names := map[string]string{}     // host name -> field that declared it
	addrs := map[netip.Addr]string{} // host address -> field that declared it
	var hostSubnets []hostSubnet     // distinct host subnets, first declaration wins
	host := func(path, name string, ip netip.Prefix) error {
		if err := v.name(path+".name", name, 63); err != nil {
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
		for _, hs := range hostSubnets {
			if hs.subnet != subnet && hs.subnet.Overlaps(subnet) {
				return v.err(path+".ip", ip.String(), "subnet %s overlaps subnet %s of %s (hosts share a subnet only with the same prefix)", subnet, hs.subnet, hs.field)
			}
		}
		if !slices.ContainsFunc(hostSubnets, func(hs hostSubnet) bool { return hs.subnet == subnet }) {
			hostSubnets = append(hostSubnets, hostSubnet{subnet, path + ".ip"})
		}
		return nil
	}

	podCIDRs := map[netip.Prefix]string{}
	var podOrder []netip.Prefix
	for i, n := range s.Nodes {
		path := fmt.Sprintf("spec.nodes[%d]", i)
		if err := host(path, n.Name, n.IP); err != nil {
			return err
		}
		field := path + ".podCIDR"
		if err := v.podCIDR(field, n.PodCIDR, s.PodSubnet); err != nil {
			return err
		}
		for _, p := range podOrder {
			if p.Overlaps(n.PodCIDR) {
				return v.err(field, n.PodCIDR.String(), "overlaps %s %s", podCIDRs[p], p)
			}
		}
		podCIDRs[n.PodCIDR] = field
		podOrder = append(podOrder, n.PodCIDR)
	}
	for i, c := range s.Clients {
		if err := host(fmt.Sprintf("spec.clients[%d]", i), c.Name, c.IP); err != nil {
			return err
		}
	}
	return nil
}

type hostSubnet struct {
	subnet netip.Prefix
	field  string
}

// name checks a DNS label (RFC 1123) of at most max characters.
func (v validator) name(field, name string, max int) error {
	switch {
	case name == "":
		return v.err(field, "", "required")
	case len(name) > max:
		return v.err(field, name, "too long: %d characters, at most %d", len(name), max)
	case !dnsLabel.MatchString(name):
		return v.err(field, name, "not a DNS label: use lower-case letters, digits and '-', starting and ending with a letter or digit")
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
	case p.Addr() == broadcast(p):
		return v.err(field, p.String(), "is the subnet's broadcast address")
	}
	return nil
}

// broadcast is the last address of p's subnet.
func broadcast(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= host
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

func list[T ~string](items []T) string {
	q := make([]string, 0, len(items))
	for _, it := range items {
		q = append(q, fmt.Sprintf("%q", string(it)))
	}
	return strings.Join(q, ", ")
}
