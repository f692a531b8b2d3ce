package kernel

import "net/netip"

// IPVS manages IPVS services and destinations. Upstream:
// pkg/proxy/ipvs/util.Interface.
type IPVS interface {
	// VirtualServers lists every IPVS service (ipvsadm -L -n).
	VirtualServers() ([]VirtualServer, error)
	// RealServers lists a service's destinations with their connection
	// counts.
	RealServers(vs VirtualServer) ([]RealServer, error)
	AddVirtualServer(vs VirtualServer) error    // ipvsadm -A
	UpdateVirtualServer(vs VirtualServer) error // ipvsadm -E
	DeleteVirtualServer(vs VirtualServer) error // ipvsadm -D
	AddRealServer(vs VirtualServer, rs RealServer) error
	UpdateRealServer(vs VirtualServer, rs RealServer) error
	DeleteRealServer(vs VirtualServer, rs RealServer) error
	// SetTimeouts is ipvsadm --set.
	SetTimeouts(t Timeouts) error
	// Timeouts reads them back (ipvsadm -L --timeout).
	Timeouts() (Timeouts, error)
}

// Links manages the dummy device and reads the node's addresses.
type Links interface {
	// EnsureDummy creates the dummy device if it is missing (ip link add
	// NAME type dummy); the device is left down, as upstream leaves it.
	EnsureDummy(name string) error
	// DeleteDummy removes it; a missing device is not an error.
	DeleteDummy(name string) error
	// Addresses lists the IPv4 and IPv6 addresses of a device, without
	// IPv6 link-local ones, sorted (IPv4 first); exists is false when there
	// is no such device.
	Addresses(dev string) (addrs []netip.Addr, exists bool, err error)
	// AddAddress is ip addr add ADDR/32 (or /128) dev DEV; an address that
	// is already there is not an error.
	AddAddress(dev string, addr netip.Addr) error
	// DelAddress is ip addr del ADDR/32 (or /128) dev DEV; a missing one is
	// not an error.
	DelAddress(dev string, addr netip.Addr) error
	// NodeAddresses lists the IPv4 and IPv6 addresses of every device
	// except `except`, without loopback and IPv6 link-local addresses,
	// sorted (IPv4 first) and without duplicates. Upstream:
	// netlinkHandle.GetAllLocalAddressesExcept, which a proxier asks for
	// its own family.
	NodeAddresses(except string) ([]netip.Addr, error)
}

// IPSets manages ipsets. Entries are strings in the ipset command's
// syntax for the set's type ("10.96.0.10,udp:53", "fd00:10:96::a,udp:53",
// "30080").
type IPSets interface {
	// ListSets lists every ipset.
	ListSets() ([]SetInfo, error)
	// CreateSet is `ipset create NAME TYPE family FAMILY ... -exist` (a
	// bitmap:port set has no family; "" is inet): an existing set of the
	// same type is kept with its entries, one of another type is an error.
	CreateSet(name string, typ SetType, family Family) error
	// Entries lists a set's members; exists is false when there is no such
	// set.
	Entries(name string) (typ SetType, entries []string, exists bool, err error)
	// AddEntry is `ipset add NAME ENTRY -exist`.
	AddEntry(name string, typ SetType, entry string) error
	// DelEntry is `ipset del NAME ENTRY`; a missing entry is not an error.
	DelEntry(name string, typ SetType, entry string) error
	// DestroySet is `ipset destroy NAME`; a missing set is not an error,
	// one still used by an iptables rule is.
	DestroySet(name string) error
}

// Sysctls reads and writes keys under /proc/sys of the namespace, written
// with slashes ("net/ipv4/vs/conntrack").
type Sysctls interface {
	Sysctl(key string) (string, error)
	SetSysctl(key, value string) error
}

// Interface is everything the IPVS mode needs from one network namespace.
type Interface interface {
	IPVS
	Links
	IPSets
	Sysctls
}
