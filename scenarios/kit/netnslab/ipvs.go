package netnslab

import (
	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/scenarios/kit"
)

// IPVS reads a lab host's IPVS table over netlink.
func (l *Lab) IPVS(host string) ([]kit.VirtualServer, error) {
	ns, err := l.Namespace(host)
	if err != nil {
		return nil, err
	}
	k, err := kernel.Open(ns)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	vss, err := k.VirtualServers()
	if err != nil {
		return nil, err
	}
	var out []kit.VirtualServer
	for _, vs := range vss {
		rss, err := k.RealServers(vs)
		if err != nil {
			return nil, err
		}
		out = append(out, kit.VirtualServer{VirtualServer: vs, RealServers: rss})
	}
	return out, nil
}
