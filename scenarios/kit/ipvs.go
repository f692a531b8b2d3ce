package kit

import (
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// VirtualServer is an IPVS service with its real servers, as a node's
// kernel has them (read over netlink, what `ipvsadm -Ln` shows).
type VirtualServer struct {
	kernel.VirtualServer
	RealServers []kernel.RealServer
}

// IPVS reads a lab host's IPVS table over netlink.
func (l *Lab) IPVS(host string) ([]VirtualServer, error) {
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
	var out []VirtualServer
	for _, vs := range vss {
		rss, err := k.RealServers(vs)
		if err != nil {
			return nil, err
		}
		out = append(out, VirtualServer{vs, rss})
	}
	return out, nil
}
