package upstream

import (
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	upstreamipvs "k8s.io/kubernetes/pkg/proxy/ipvs"
	utilipvs "k8s.io/kubernetes/pkg/proxy/ipvs/util"
)

// countingIPVS is upstream's utilipvs.Interface counting each call as one
// netlink request (netlinkCounted).
type countingIPVS struct {
	utilipvs.Interface
	counts *execCounts
}

func (c countingIPVS) count() { c.counts.add(netlinkCounted, 1) }

func (c countingIPVS) Flush() error { c.count(); return c.Interface.Flush() }

func (c countingIPVS) AddVirtualServer(vs *utilipvs.VirtualServer) error {
	c.count()
	return c.Interface.AddVirtualServer(vs)
}

func (c countingIPVS) UpdateVirtualServer(vs *utilipvs.VirtualServer) error {
	c.count()
	return c.Interface.UpdateVirtualServer(vs)
}

func (c countingIPVS) DeleteVirtualServer(vs *utilipvs.VirtualServer) error {
	c.count()
	return c.Interface.DeleteVirtualServer(vs)
}

func (c countingIPVS) GetVirtualServer(vs *utilipvs.VirtualServer) (*utilipvs.VirtualServer, error) {
	c.count()
	return c.Interface.GetVirtualServer(vs)
}

func (c countingIPVS) GetVirtualServers() ([]*utilipvs.VirtualServer, error) {
	c.count()
	return c.Interface.GetVirtualServers()
}

func (c countingIPVS) AddRealServer(vs *utilipvs.VirtualServer, rs *utilipvs.RealServer) error {
	c.count()
	return c.Interface.AddRealServer(vs, rs)
}

func (c countingIPVS) GetRealServers(vs *utilipvs.VirtualServer) ([]*utilipvs.RealServer, error) {
	c.count()
	return c.Interface.GetRealServers(vs)
}

func (c countingIPVS) DeleteRealServer(vs *utilipvs.VirtualServer, rs *utilipvs.RealServer) error {
	c.count()
	return c.Interface.DeleteRealServer(vs, rs)
}

func (c countingIPVS) UpdateRealServer(vs *utilipvs.VirtualServer, rs *utilipvs.RealServer) error {
	c.count()
	return c.Interface.UpdateRealServer(vs, rs)
}

func (c countingIPVS) ConfigureTimeouts(tcp, tcpFin, udp time.Duration) error {
	c.count()
	return c.Interface.ConfigureTimeouts(tcp, tcpFin, udp)
}

// countingNetLinkHandle is upstream's IPVS netlink handle (kube-ipvs0 and
// the node's addresses) counting each call as one netlink request, as
// svclab's kernel.Calls counts its links and addresses: a lower bound
// for both (a bind looks the link up first).
type countingNetLinkHandle struct {
	upstreamipvs.NetLinkHandle
	counts *execCounts
}

func (c countingNetLinkHandle) count() { c.counts.add(netlinkCounted, 1) }

func (c countingNetLinkHandle) EnsureAddressBind(address, devName string) (bool, error) {
	c.count()
	return c.NetLinkHandle.EnsureAddressBind(address, devName)
}

func (c countingNetLinkHandle) UnbindAddress(address, devName string) error {
	c.count()
	return c.NetLinkHandle.UnbindAddress(address, devName)
}

func (c countingNetLinkHandle) EnsureDummyDevice(devName string) (bool, error) {
	c.count()
	return c.NetLinkHandle.EnsureDummyDevice(devName)
}

func (c countingNetLinkHandle) DeleteDummyDevice(devName string) error {
	c.count()
	return c.NetLinkHandle.DeleteDummyDevice(devName)
}

func (c countingNetLinkHandle) ListBindAddress(devName string) ([]string, error) {
	c.count()
	return c.NetLinkHandle.ListBindAddress(devName)
}

func (c countingNetLinkHandle) GetAllLocalAddresses() (sets.Set[string], error) {
	c.count()
	return c.NetLinkHandle.GetAllLocalAddresses()
}

func (c countingNetLinkHandle) GetLocalAddresses(dev string) (sets.Set[string], error) {
	c.count()
	return c.NetLinkHandle.GetLocalAddresses(dev)
}

func (c countingNetLinkHandle) GetAllLocalAddressesExcept(dev string) (sets.Set[string], error) {
	c.count()
	return c.NetLinkHandle.GetAllLocalAddressesExcept(dev)
}
