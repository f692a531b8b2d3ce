package kernel

import (
	"maps"
	"net/netip"
	"sync"
)

// Counting is an Interface that counts every call it passes on to the
// one it wraps, so that a sync can say how many netlink requests it made
// (see Calls). It is safe for concurrent use if the wrapped one is.
type Counting struct {
	k     Interface
	mu    sync.Mutex
	calls Calls
}

var _ Interface = (*Counting)(nil)

// Count wraps k.
func Count(k Interface) *Counting { return &Counting{k: k, calls: Calls{}} }

// Calls returns the counts so far.
func (c *Counting) Calls() Calls {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

// TakeCalls returns the counts so far and starts again from zero.
func (c *Counting) TakeCalls() Calls {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = Calls{}
	return out
}

func (c *Counting) count(call string) {
	c.mu.Lock()
	c.calls[call]++
	c.mu.Unlock()
}

// VirtualServers implements IPVS.
func (c *Counting) VirtualServers() ([]VirtualServer, error) {
	c.count("VirtualServers")
	return c.k.VirtualServers()
}

// RealServers implements IPVS.
func (c *Counting) RealServers(vs VirtualServer) ([]RealServer, error) {
	c.count("RealServers")
	return c.k.RealServers(vs)
}

// AddVirtualServer implements IPVS.
func (c *Counting) AddVirtualServer(vs VirtualServer) error {
	c.count("AddVirtualServer")
	return c.k.AddVirtualServer(vs)
}

// UpdateVirtualServer implements IPVS.
func (c *Counting) UpdateVirtualServer(vs VirtualServer) error {
	c.count("UpdateVirtualServer")
	return c.k.UpdateVirtualServer(vs)
}

// DeleteVirtualServer implements IPVS.
func (c *Counting) DeleteVirtualServer(vs VirtualServer) error {
	c.count("DeleteVirtualServer")
	return c.k.DeleteVirtualServer(vs)
}

// AddRealServer implements IPVS.
func (c *Counting) AddRealServer(vs VirtualServer, rs RealServer) error {
	c.count("AddRealServer")
	return c.k.AddRealServer(vs, rs)
}

// UpdateRealServer implements IPVS.
func (c *Counting) UpdateRealServer(vs VirtualServer, rs RealServer) error {
	c.count("UpdateRealServer")
	return c.k.UpdateRealServer(vs, rs)
}

// DeleteRealServer implements IPVS.
func (c *Counting) DeleteRealServer(vs VirtualServer, rs RealServer) error {
	c.count("DeleteRealServer")
	return c.k.DeleteRealServer(vs, rs)
}

// SetTimeouts implements IPVS.
func (c *Counting) SetTimeouts(t Timeouts) error {
	c.count("SetTimeouts")
	return c.k.SetTimeouts(t)
}

// Timeouts implements IPVS.
func (c *Counting) Timeouts() (Timeouts, error) {
	c.count("Timeouts")
	return c.k.Timeouts()
}

// EnsureDummy implements Links.
func (c *Counting) EnsureDummy(name string) error {
	c.count("EnsureDummy")
	return c.k.EnsureDummy(name)
}

// DeleteDummy implements Links.
func (c *Counting) DeleteDummy(name string) error {
	c.count("DeleteDummy")
	return c.k.DeleteDummy(name)
}

// Addresses implements Links.
func (c *Counting) Addresses(dev string) ([]netip.Addr, bool, error) {
	c.count("Addresses")
	return c.k.Addresses(dev)
}

// AddAddress implements Links.
func (c *Counting) AddAddress(dev string, addr netip.Addr) error {
	c.count("AddAddress")
	return c.k.AddAddress(dev, addr)
}

// DelAddress implements Links.
func (c *Counting) DelAddress(dev string, addr netip.Addr) error {
	c.count("DelAddress")
	return c.k.DelAddress(dev, addr)
}

// NodeAddresses implements Links.
func (c *Counting) NodeAddresses(except string) ([]netip.Addr, error) {
	c.count("NodeAddresses")
	return c.k.NodeAddresses(except)
}

// ListSets implements IPSets.
func (c *Counting) ListSets() ([]SetInfo, error) {
	c.count("ListSets")
	return c.k.ListSets()
}

// CreateSet implements IPSets.
func (c *Counting) CreateSet(name string, typ SetType, family Family) error {
	c.count("CreateSet")
	return c.k.CreateSet(name, typ, family)
}

// Entries implements IPSets.
func (c *Counting) Entries(name string) (SetType, []string, bool, error) {
	c.count("Entries")
	return c.k.Entries(name)
}

// AddEntry implements IPSets.
func (c *Counting) AddEntry(name string, typ SetType, entry string) error {
	c.count("AddEntry")
	return c.k.AddEntry(name, typ, entry)
}

// DelEntry implements IPSets.
func (c *Counting) DelEntry(name string, typ SetType, entry string) error {
	c.count("DelEntry")
	return c.k.DelEntry(name, typ, entry)
}

// DestroySet implements IPSets.
func (c *Counting) DestroySet(name string) error {
	c.count("DestroySet")
	return c.k.DestroySet(name)
}

// Sysctl implements Sysctls.
func (c *Counting) Sysctl(key string) (string, error) {
	c.count("Sysctl")
	return c.k.Sysctl(key)
}

// SetSysctl implements Sysctls.
func (c *Counting) SetSysctl(key, value string) error {
	c.count("SetSysctl")
	return c.k.SetSysctl(key, value)
}
