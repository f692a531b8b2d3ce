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
