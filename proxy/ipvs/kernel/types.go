package kernel

import (
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Protocol is an IPVS service protocol as upstream spells it: "TCP", "UDP"
// or "SCTP" (utilipvs.VirtualServer.Protocol).
type Protocol string

const (
	TCP  Protocol = "TCP"
	UDP  Protocol = "UDP"
	SCTP Protocol = "SCTP"
)

// Lower is the protocol as ipset and iptables write it ("tcp").
func (p Protocol) Lower() string { return strings.ToLower(string(p)) }

// Number is the IP protocol number (6, 17, 132); 0 for an unknown protocol.
func (p Protocol) Number() uint8 {
	switch p {
	case TCP:
		return 6
	case UDP:
		return 17
	case SCTP:
		return 132
	}
	return 0
}

// ProtocolFromNumber is the inverse of Number ("" for an unknown number).
func ProtocolFromNumber(n uint8) Protocol {
	switch n {
	case 6:
		return TCP
	case 17:
		return UDP
	case 132:
		return SCTP
	}
	return ""
}

// ipvsadmFlag is ipvsadm's service option for the protocol.
func (p Protocol) ipvsadmFlag() string {
	switch p {
	case UDP:
		return "-u"
	case SCTP:
		return "--sctp-service"
	}
	return "-t"
}

// Service flags (IP_VS_SVC_F_*), as upstream's utilipvs.ServiceFlags.
const (
	// FlagPersistent is session affinity (ipvsadm -p).
	FlagPersistent uint32 = 0x1
	// FlagHashed is set by the kernel on every service; it is stripped when
	// reading so that desired and actual flags compare equal.
	FlagHashed uint32 = 0x2
	// FlagSourceHash (IP_VS_SVC_F_SCHED2) makes the mh and sh schedulers
	// hash the source port too (ipvsadm -b mh-port).
	FlagSourceHash uint32 = 0x10
)

// VirtualServer is one IPVS service. Upstream: utilipvs.VirtualServer.
type VirtualServer struct {
	Address  netip.Addr
	Protocol Protocol
	Port     uint16
	// Scheduler is the IPVS scheduler name ("rr").
	Scheduler string
	// Flags are FlagPersistent and FlagSourceHash, never FlagHashed.
	Flags uint32
	// Timeout is the persistence timeout in seconds (with FlagPersistent).
	Timeout uint32
}

// Key identifies the service in the kernel: "10.96.0.10:53/UDP", upstream's
// VirtualServer.String().
func (v VirtualServer) Key() string {
	return netip.AddrPortFrom(v.Address, v.Port).String() + "/" + string(v.Protocol)
}

// SameKey reports whether two values name the same kernel service.
func (v VirtualServer) SameKey(o VirtualServer) bool {
	return v.Address == o.Address && v.Port == o.Port && v.Protocol == o.Protocol
}

// Target is the service argument of ipvsadm: "-t 10.96.0.10:53".
func (v VirtualServer) Target() string {
	return v.Protocol.ipvsadmFlag() + " " + netip.AddrPortFrom(v.Address, v.Port).String()
}

// Options are the ipvsadm options after the target: "-s rr -p 10800".
func (v VirtualServer) Options() string {
	s := "-s " + v.Scheduler
	if v.Flags&FlagPersistent != 0 {
		s += " -p " + strconv.FormatUint(uint64(v.Timeout), 10)
	}
	if v.Flags&FlagSourceHash != 0 {
		s += " -b " + v.Scheduler + "-port"
	}
	return s
}

// String is the service as `ipvsadm -S -n` saves it:
// "-A -t 10.96.0.10:53 -s rr".
func (v VirtualServer) String() string { return "-A " + v.Target() + " " + v.Options() }

// RealServer is one IPVS destination, always in NAT (masquerading) mode as
// upstream creates them. Upstream: utilipvs.RealServer.
type RealServer struct {
	Address netip.Addr
	Port    uint16
	Weight  int
	// ActiveConn and InactiveConn are read from the kernel; they are
	// ignored when writing.
	ActiveConn   int
	InactiveConn int
}

// Key is "IP:port", upstream's RealServer.String().
func (r RealServer) Key() string { return netip.AddrPortFrom(r.Address, r.Port).String() }

// SameKey reports whether two values name the same destination.
func (r RealServer) SameKey(o RealServer) bool { return r.Address == o.Address && r.Port == o.Port }

// Describe is the destination as `ipvsadm -S -n` saves it, without the
// service: "-r 10.244.1.5:53 -m -w 1".
func (r RealServer) Describe() string {
	return "-r " + r.Key() + " -m -w " + strconv.Itoa(r.Weight)
}

// Timeouts are the IPVS connection timeouts (`ipvsadm --set tcp tcpfin
// udp`); a zero field leaves the kernel's value unchanged.
type Timeouts struct {
	TCP, TCPFin, UDP time.Duration
}

// SetType is an ipset type. Upstream: utilipset.Type.
type SetType string

const (
	HashIP        SetType = "hash:ip"
	HashIPPort    SetType = "hash:ip,port"
	HashIPPortIP  SetType = "hash:ip,port,ip"
	HashIPPortNet SetType = "hash:ip,port,net"
	BitmapPort    SetType = "bitmap:port"
)

// Family is an ipset's address family as the ipset command writes it
// (`family inet6`); the zero value is inet. bitmap:port sets have none.
// Upstream: utilipset.IPSet.HashFamily.
type Family string

const (
	Inet  Family = "inet"
	Inet6 Family = "inet6"
)

// FamilyOf is the family of addr: Inet6 for an IPv6 address, else Inet.
func FamilyOf(addr netip.Addr) Family {
	if addr.Is6() {
		return Inet6
	}
	return Inet
}

// OrInet is f, or Inet when f is empty.
func (f Family) OrInet() Family {
	if f == "" {
		return Inet
	}
	return f
}

// SetInfo describes an existing ipset.
type SetInfo struct {
	Name string
	Type SetType
}
