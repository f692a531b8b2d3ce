package topology

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/svclab/svclab/labs/podnet"
)

// convert parses the strings of a decoded file into a typed Lab. It only
// reports values that do not parse, into p, and goes on: such a field
// stays a zero value (an element of a list keeps its place), and Validate
// skips a field p has a problem for. Empty strings stay zero values too,
// which Validate reports as required.
func convert(f *fileLab, p *problems) *Lab {
	lab := &Lab{
		APIVersion: f.APIVersion,
		Kind:       f.Kind,
		Metadata:   Metadata{Name: f.Metadata.Name},
		Source:     p.source,
		Spec: Spec{
			CNI:      CNI(f.Spec.CNI),
			IPFamily: IPFamily(f.Spec.IPFamily),
			Proxy: Proxy{
				Mode:            ProxyMode(f.Spec.Proxy.Mode),
				IPTablesBackend: IPTablesBackend(f.Spec.Proxy.IPTablesBackend),
			},
		},
	}
	if lab.Spec.Proxy.Mode == "" {
		lab.Spec.Proxy.Mode = ProxyModeIPTables
	}
	lab.Spec.PodSubnets = parseList(p, "spec.podSubnet", f.Spec.PodSubnet, parseCIDR)
	lab.Spec.PodSubnet = first(lab.Spec.PodSubnets)
	lab.Spec.ServiceSubnets = parseList(p, "spec.serviceSubnet", f.Spec.ServiceSubnet, parseCIDR)
	lab.Spec.ServiceSubnet = first(lab.Spec.ServiceSubnets)
	for i, n := range f.Spec.Nodes {
		path := fmt.Sprintf("spec.nodes[%d]", i)
		node := Node{
			Name:     n.Name,
			IPs:      parseList(p, path+".ip", n.IP, parseHostIP),
			PodCIDRs: parseList(p, path+".podCIDR", n.PodCIDR, parseCIDR),
		}
		node.IP, node.PodCIDR = first(node.IPs), first(node.PodCIDRs)
		lab.Spec.Nodes = append(lab.Spec.Nodes, node)
	}
	for i, c := range f.Spec.Clients {
		path := fmt.Sprintf("spec.clients[%d]", i)
		client := Client{Name: c.Name, IPs: parseList(p, path+".ip", c.IP, parseHostIP)}
		client.IP = first(client.IPs)
		lab.Spec.Clients = append(lab.Spec.Clients, client)
	}
	if s := f.Spec.LoadBalancer.Pool; s != "" {
		pool, err := podnet.ParseAddrRange(s)
		if err != nil {
			p.notParsed("spec.loadBalancer.pool", s, "%v", err)
		} else {
			lab.Spec.LoadBalancer.Pool = pool
		}
	}
	for i, s := range f.Spec.ExternalIPs {
		field := fmt.Sprintf("spec.externalIPs[%d]", i)
		if s == "" {
			p.notParsed(field, "", "required (a CIDR such as 203.0.113.0/24)")
		}
		lab.Spec.ExternalIPs = append(lab.Spec.ExternalIPs, parseCIDR(p, field, s))
	}
	return lab
}

// parseList parses a field that holds one value per IP family in kind's
// comma form, "10.244.0.0/16,fd00:10:244::/56", each with parse; ""
// gives nil, and a value that does not parse stays a zero Prefix in its
// place. A field of one value parses exactly as parse alone does.
func parseList(p *problems, field, s string, parse func(*problems, string, string) netip.Prefix) []netip.Prefix {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	var out []netip.Prefix
	for _, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" && len(parts) > 1 {
			p.notParsed(field, s, "an empty value in the comma-separated list")
		}
		out = append(out, parse(p, field, part))
	}
	return out
}

// first is a list's first (primary) value, or the zero Prefix.
func first(list []netip.Prefix) netip.Prefix {
	if len(list) == 0 {
		return netip.Prefix{}
	}
	return list[0]
}

// parseCIDR parses a CIDR such as 10.244.0.0/16; "" and a CIDR that does
// not parse (a problem of field) give the zero Prefix.
func parseCIDR(p *problems, field, s string) netip.Prefix {
	if s == "" {
		return netip.Prefix{}
	}
	prefix, err := netip.ParsePrefix(s)
	if err != nil {
		p.notParsed(field, s, "invalid CIDR")
		return netip.Prefix{}
	}
	return prefix
}

// parseHostIP parses an address with its subnet length, such as
// 192.168.16.73/20; "" and an address that does not parse (a problem of
// field) give the zero Prefix.
func parseHostIP(p *problems, field, s string) netip.Prefix {
	if s == "" {
		return netip.Prefix{}
	}
	prefix, err := netip.ParsePrefix(s)
	if err != nil {
		if _, aerr := netip.ParseAddr(s); aerr == nil {
			p.notParsed(field, s, "missing prefix length: write address/length, e.g. %s/24", s)
		} else {
			p.notParsed(field, s, "invalid address: want address/length, e.g. 192.168.16.73/20")
		}
		return netip.Prefix{}
	}
	return prefix
}
