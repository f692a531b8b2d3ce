package conntrack

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// Netlink attribute types of a conntrack message (nfnetlink_conntrack.h).
const (
	ctaTupleOrig  = 1
	ctaTupleReply = 2
	ctaStatus     = 3
	ctaProtoinfo  = 4
	ctaTimeout    = 7
	ctaMark       = 8

	ctaTupleIP    = 1
	ctaTupleProto = 2

	ctaIPv4Src = 1
	ctaIPv4Dst = 2
	ctaIPv6Src = 3
	ctaIPv6Dst = 4

	ctaProtoNum     = 1
	ctaProtoSrcPort = 2
	ctaProtoDstPort = 3

	ctaProtoinfoTCP      = 1
	ctaProtoinfoTCPState = 1

	nlaTypeMask = 0x3fff // strips NLA_F_NESTED and NLA_F_NET_BYTEORDER
)

// attr is one netlink attribute: its type and its payload.
type attr struct {
	typ  uint16
	data []byte
}

// attrs splits b into netlink attributes (4-byte aligned, host-endian headers).
func attrs(b []byte) ([]attr, error) {
	var out []attr
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		t := binary.NativeEndian.Uint16(b[2:4]) & nlaTypeMask
		if l < 4 || l > len(b) {
			return nil, fmt.Errorf("conntrack: attribute of length %d in %d bytes", l, len(b))
		}
		out = append(out, attr{typ: t, data: b[4:l]})
		aligned := (l + 3) &^ 3
		if aligned > len(b) {
			aligned = len(b)
		}
		b = b[aligned:]
	}
	return out, nil
}

// parseFlow parses one IPCTNL_MSG_CT_NEW message payload: the 4-byte
// nfgenmsg header, then the attributes.
func parseFlow(msg []byte) (Flow, error) {
	var f Flow
	if len(msg) < 4 {
		return f, fmt.Errorf("conntrack: message of %d bytes", len(msg))
	}
	top, err := attrs(msg[4:])
	if err != nil {
		return f, err
	}
	for _, a := range top {
		switch a.typ {
		case ctaTupleOrig:
			if f.Orig, f.Proto, err = parseTuple(a.data); err != nil {
				return f, err
			}
		case ctaTupleReply:
			if f.Reply, _, err = parseTuple(a.data); err != nil {
				return f, err
			}
		case ctaStatus:
			f.Status = be32(a.data)
		case ctaTimeout:
			f.Timeout = be32(a.data)
		case ctaMark:
			f.Mark = be32(a.data)
		case ctaProtoinfo:
			f.TCPState = parseTCPState(a.data)
		}
	}
	return f, nil
}

func parseTuple(b []byte) (Tuple, uint8, error) {
	var t Tuple
	var proto uint8
	var src, dst netip.Addr
	var sport, dport uint16
	parts, err := attrs(b)
	if err != nil {
		return t, 0, err
	}
	for _, p := range parts {
		inner, err := attrs(p.data)
		if err != nil {
			return t, 0, err
		}
		for _, a := range inner {
			switch {
			case p.typ == ctaTupleIP && a.typ == ctaIPv4Src && len(a.data) == 4:
				src = netip.AddrFrom4([4]byte(a.data))
			case p.typ == ctaTupleIP && a.typ == ctaIPv4Dst && len(a.data) == 4:
				dst = netip.AddrFrom4([4]byte(a.data))
			case p.typ == ctaTupleIP && a.typ == ctaIPv6Src && len(a.data) == 16:
				src = netip.AddrFrom16([16]byte(a.data))
			case p.typ == ctaTupleIP && a.typ == ctaIPv6Dst && len(a.data) == 16:
				dst = netip.AddrFrom16([16]byte(a.data))
			case p.typ == ctaTupleProto && a.typ == ctaProtoNum && len(a.data) >= 1:
				proto = a.data[0]
			case p.typ == ctaTupleProto && a.typ == ctaProtoSrcPort && len(a.data) >= 2:
				sport = binary.BigEndian.Uint16(a.data)
			case p.typ == ctaTupleProto && a.typ == ctaProtoDstPort && len(a.data) >= 2:
				dport = binary.BigEndian.Uint16(a.data)
			}
		}
	}
	t.Src, t.Dst = netip.AddrPortFrom(src, sport), netip.AddrPortFrom(dst, dport)
	return t, proto, nil
}

func parseTCPState(b []byte) uint8 {
	outer, err := attrs(b)
	if err != nil {
		return 0
	}
	for _, o := range outer {
		if o.typ != ctaProtoinfoTCP {
			continue
		}
		inner, err := attrs(o.data)
		if err != nil {
			return 0
		}
		for _, a := range inner {
			if a.typ == ctaProtoinfoTCPState && len(a.data) >= 1 {
				return a.data[0]
			}
		}
	}
	return 0
}

func be32(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}
