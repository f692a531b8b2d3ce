package conntrack

import (
	"fmt"
	"net/netip"
	"strings"
)

// Status bits of a conntrack entry (include/uapi/linux/netfilter/nf_conntrack_common.h).
const (
	StatusExpected   uint32 = 1 << 0
	StatusSeenReply  uint32 = 1 << 1
	StatusAssured    uint32 = 1 << 2
	StatusConfirmed  uint32 = 1 << 3
	StatusSrcNAT     uint32 = 1 << 4
	StatusDstNAT     uint32 = 1 << 5
	StatusSrcNATDone uint32 = 1 << 7
	StatusDstNATDone uint32 = 1 << 8
)

// Tuple is one direction of a connection.
type Tuple struct {
	Src, Dst netip.AddrPort
}

// Flow is one conntrack entry.
type Flow struct {
	Proto   uint8 // 6 TCP, 17 UDP, 132 SCTP
	Orig    Tuple
	Reply   Tuple
	Status  uint32
	Mark    uint32
	Timeout uint32 // seconds left
	// TCPState is the TCP conntrack state (see TCPStateName); 0 if not TCP.
	TCPState uint8
}

// Family is the entry's address family, as `conntrack -L -o extended`
// names it: ipv4 or ipv6.
func (f Flow) Family() string {
	if f.Orig.Src.Addr().Is6() {
		return "ipv6"
	}
	return "ipv4"
}

// SrcNAT reports whether the connection's source was translated (SNAT or
// MASQUERADE), as conntrack's status bit IPS_SRC_NAT says.
func (f Flow) SrcNAT() bool { return f.Status&StatusSrcNAT != 0 }

// DstNAT reports whether the connection's destination was translated (DNAT).
func (f Flow) DstNAT() bool { return f.Status&StatusDstNAT != 0 }

// tcpStates are the names conntrack prints (nf_conntrack_proto_tcp.c).
var tcpStates = []string{"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT", "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2"}

// TCPStateName is the state as `conntrack -L` prints it.
func (f Flow) TCPStateName() string {
	if int(f.TCPState) < len(tcpStates) {
		return tcpStates[f.TCPState]
	}
	return fmt.Sprint(f.TCPState)
}

// String prints the entry in `conntrack -L`'s shape, with the NAT bits;
// an IPv6 entry has the same shape, with IPv6 addresses.
func (f Flow) String() string {
	var b strings.Builder
	proto := map[uint8]string{6: "tcp", 17: "udp", 132: "sctp", 1: "icmp"}[f.Proto]
	fmt.Fprintf(&b, "%s %d %d ", proto, f.Proto, f.Timeout)
	if f.Proto == 6 {
		b.WriteString(f.TCPStateName() + " ")
	}
	fmt.Fprintf(&b, "src=%s dst=%s sport=%d dport=%d src=%s dst=%s sport=%d dport=%d",
		f.Orig.Src.Addr(), f.Orig.Dst.Addr(), f.Orig.Src.Port(), f.Orig.Dst.Port(),
		f.Reply.Src.Addr(), f.Reply.Dst.Addr(), f.Reply.Src.Port(), f.Reply.Dst.Port())
	if f.Status&StatusAssured != 0 {
		b.WriteString(" [ASSURED]")
	}
	if f.SrcNAT() {
		b.WriteString(" [SNAT]")
	}
	if f.DstNAT() {
		b.WriteString(" [DNAT]")
	}
	fmt.Fprintf(&b, " mark=%d", f.Mark)
	return b.String()
}
