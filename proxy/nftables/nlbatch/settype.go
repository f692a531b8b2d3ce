package nlbatch

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// field is one part of a set's key or a map's data, laid out as nft lays
// it out: each part of a concatenation padded to four bytes.
type field int

const (
	ipv4Addr field = iota
	ipv6Addr
	inetProto
	inetService
)

var fieldNames = map[string]field{
	"ipv4_addr":    ipv4Addr,
	"ipv6_addr":    ipv6Addr,
	"inet_proto":   inetProto,
	"inet_service": inetService,
}

// protocols are the names nft prints for inet_proto, as knftables writes
// them.
var protocols = map[string]byte{"tcp": unix.IPPROTO_TCP, "udp": unix.IPPROTO_UDP, "sctp": unix.IPPROTO_SCTP}

// SetType is a named set's key, and whether it is a verdict map: the
// types of kube-proxy's sets and maps that Compile writes elements of.
type SetType struct {
	key     []field
	verdict bool
}

// parseSetType reads an `add set`/`add map` line's type, "ipv4_addr .
// inet_proto . inet_service : verdict" and the like; ok is false for any
// part it does not know.
func parseSetType(s string) (SetType, bool) {
	keyText, data, isMap := strings.Cut(s, " : ")
	var t SetType
	if isMap {
		if strings.TrimSpace(data) != "verdict" {
			return SetType{}, false
		}
		t.verdict = true
	}
	for _, part := range strings.Split(keyText, " . ") {
		f, ok := fieldNames[strings.TrimSpace(part)]
		if !ok {
			return SetType{}, false
		}
		t.key = append(t.key, f)
	}
	return t, len(t.key) > 0
}

// appendField appends one part of a key or a map's data: an address of
// the field's family, a protocol name or a port, padded to four bytes.
func appendField(b []byte, f field, text string) ([]byte, bool) {
	switch f {
	case ipv4Addr, ipv6Addr:
		a, err := netip.ParseAddr(text)
		if err != nil || a.Zone() != "" || a.Is4In6() || a.Is4() != (f == ipv4Addr) {
			return nil, false
		}
		return append(b, a.AsSlice()...), true
	case inetProto:
		p, ok := protocols[text]
		if !ok {
			return nil, false
		}
		return append(b, p, 0, 0, 0), true
	case inetService:
		port, err := strconv.ParseUint(text, 10, 16)
		if err != nil || strconv.FormatUint(port, 10) != text {
			return nil, false
		}
		return append(binary.BigEndian.AppendUint16(b, uint16(port)), 0, 0), true
	}
	return nil, false
}

// key encodes the key text of an element, parts joined by " . ".
func (t SetType) encodeKey(text string) ([]byte, bool) {
	parts := strings.Split(text, " . ")
	if len(parts) != len(t.key) {
		return nil, false
	}
	var b []byte
	for i, p := range parts {
		var ok bool
		if b, ok = appendField(b, t.key[i], p); !ok {
			return nil, false
		}
	}
	return b, true
}
