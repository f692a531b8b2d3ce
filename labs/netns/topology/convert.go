package topology

import (
	"fmt"
	"net/netip"

	"github.com/svclab/svclab/labs/podnet"
)

// convert parses the strings of a decoded file into a typed Lab. It only
// reports values that do not parse; Validate judges the parsed values.
// Empty strings stay zero values, which Validate reports as required.
func convert(f *fileLab, source string) (*Lab, error) {
	lab := &Lab{
		APIVersion: f.APIVersion,
		Kind:       f.Kind,
		Metadata:   Metadata{Name: f.Metadata.Name},
		Source:     source,
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
	var err error
	if lab.Spec.PodSubnet, err = parseCIDR(f.Spec.PodSubnet, "spec.podSubnet", source); err != nil {
		return nil, err
	}
	if lab.Spec.ServiceSubnet, err = parseCIDR(f.Spec.ServiceSubnet, "spec.serviceSubnet", source); err != nil {
		return nil, err
	}
	for i, n := range f.Spec.Nodes {
		path := fmt.Sprintf("spec.nodes[%d]", i)
		node := Node{Name: n.Name}
		if node.IP, err = parseHostIP(n.IP, path+".ip", source); err != nil {
			return nil, err
		}
		if node.PodCIDR, err = parseCIDR(n.PodCIDR, path+".podCIDR", source); err != nil {
			return nil, err
		}
		lab.Spec.Nodes = append(lab.Spec.Nodes, node)
	}
	for i, c := range f.Spec.Clients {
		path := fmt.Sprintf("spec.clients[%d]", i)
		client := Client{Name: c.Name}
		if client.IP, err = parseHostIP(c.IP, path+".ip", source); err != nil {
			return nil, err
		}
		lab.Spec.Clients = append(lab.Spec.Clients, client)
	}
	if f.Spec.LoadBalancer.Pool != "" {
		pool, err := podnet.ParseAddrRange(f.Spec.LoadBalancer.Pool)
		if err != nil {
			return nil, fieldErr(source, "spec.loadBalancer.pool", f.Spec.LoadBalancer.Pool, "%v", err)
		}
		lab.Spec.LoadBalancer.Pool = pool
	}
	for i, s := range f.Spec.ExternalIPs {
		field := fmt.Sprintf("spec.externalIPs[%d]", i)
		if s == "" {
			return nil, fieldErr(source, field, "", "required (a CIDR such as 203.0.113.0/24)")
		}
		p, err := parseCIDR(s, field, source)
		if err != nil {
			return nil, err
		}
		lab.Spec.ExternalIPs = append(lab.Spec.ExternalIPs, p)
	}
	return lab, nil
}

// parseCIDR parses a CIDR such as 10.244.0.0/16; "" gives the zero Prefix.
func parseCIDR(s, field, source string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fieldErr(source, field, s, "invalid CIDR")
	}
	return p, nil
}

// parseHostIP parses an address with its subnet length, such as
// 192.168.16.73/20; "" gives the zero Prefix.
func parseHostIP(s, field, source string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		if _, aerr := netip.ParseAddr(s); aerr == nil {
			return netip.Prefix{}, fieldErr(source, field, s, "missing prefix length: write address/length, e.g. %s/24", s)
		}
		return netip.Prefix{}, fieldErr(source, field, s, "invalid address: want address/length, e.g. 192.168.16.73/20")
	}
	return p, nil
}
