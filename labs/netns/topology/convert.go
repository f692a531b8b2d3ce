package topology

import (
	"fmt"
	"net/netip"

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
			CNI: CNI(f.Spec.CNI),
			Proxy: Proxy{
				Mode:            ProxyMode(f.Spec.Proxy.Mode),
				IPTablesBackend: IPTablesBackend(f.Spec.Proxy.IPTablesBackend),
			},
		},
	}
	if lab.Spec.Proxy.Mode == "" {
		lab.Spec.Proxy.Mode = ProxyModeIPTables
	}
	lab.Spec.PodSubnet = parseCIDR(p, "spec.podSubnet", f.Spec.PodSubnet)
	lab.Spec.ServiceSubnet = parseCIDR(p, "spec.serviceSubnet", f.Spec.ServiceSubnet)
	for i, n := range f.Spec.Nodes {
		path := fmt.Sprintf("spec.nodes[%d]", i)
		lab.Spec.Nodes = append(lab.Spec.Nodes, Node{
			Name:    n.Name,
			IP:      parseHostIP(p, path+".ip", n.IP),
			PodCIDR: parseCIDR(p, path+".podCIDR", n.PodCIDR),
		})
	}
	for i, c := range f.Spec.Clients {
		path := fmt.Sprintf("spec.clients[%d]", i)
		lab.Spec.Clients = append(lab.Spec.Clients, Client{Name: c.Name, IP: parseHostIP(p, path+".ip", c.IP)})
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
