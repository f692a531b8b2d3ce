package nlbatch

import (
	"net/netip"
	"strings"

	"golang.org/x/sys/unix"
)

// The rules of an external chain with externalTrafficPolicy Local, in
// upstream v1.36's nftables proxier: an optional match, then a mark or a
// verdict.
//
//	ip saddr 10.244.0.0/16 goto CHAIN comment "short-circuit pod traffic"
//	fib saddr type local mark set mark or 0x00004000 comment "masquerade local traffic"
//	fib saddr type local goto CHAIN comment "short-circuit local traffic"

// parseMatchAction reads `[MATCH] ACTION`: MATCH an address match or `fib
// saddr type local`, ACTION `mark set mark or 0x…` or a goto or jump. ok
// is false for anything else.
func parseMatchAction(family, text string) (func(*attrs), bool) {
	var match func(*attrs)
	if m, rest, ok := parseAddressMatch(family, text); ok {
		match, text = m, rest
	} else if rest, ok := strings.CutPrefix(text, "fib saddr type local "); ok {
		match, text = fibSaddrLocal, rest
	}
	var action func(*attrs)
	if m, ok := parseMarkOr(text); ok {
		action = m.expressions
	} else if v, ok := parseVerdict(text); ok && v.chain != "" {
		action = v.expressions
	} else {
		return nil, false
	}
	return func(l *attrs) {
		if match != nil {
			match(l)
		}
		action(l)
	}, true
}

// addressOffsets are where the network header holds the source and the
// destination address, per family.
var addressOffsets = map[string]map[string]uint32{
	"ip":  {"saddr": 12, "daddr": 16},
	"ip6": {"saddr": 8, "daddr": 24},
}

// parseAddressMatch reads `FAMILY saddr|daddr ADDRESS-OR-PREFIX ` at the
// start of text (the family's own keyword: ip or ip6) and returns its
// expressions as nft 1.0.6 writes them: a whole address loaded and
// compared; a prefix of whole bytes, only those bytes; any other prefix,
// the whole address masked first.
func parseAddressMatch(family, text string) (func(*attrs), string, bool) {
	word, rest, _ := strings.Cut(text, " ")
	direction, rest, _ := strings.Cut(rest, " ")
	value, rest, _ := strings.Cut(rest, " ")
	offset, ok := addressOffsets[family][direction]
	if word != family || !ok {
		return nil, "", false
	}
	prefix, err := netip.ParsePrefix(value)
	if err != nil {
		addr, err := netip.ParseAddr(value)
		if err != nil {
			return nil, "", false
		}
		prefix = netip.PrefixFrom(addr, addr.BitLen())
	}
	addr := prefix.Addr()
	if addr.Zone() != "" || addr.Is4In6() || addr.Is4() != (family == "ip") || prefix.Bits() == 0 || prefix.Masked() != prefix {
		return nil, "", false
	}
	full := addr.AsSlice()
	bits := prefix.Bits()
	loaded, masked := full, false
	switch {
	case bits == addr.BitLen():
	case bits%8 == 0:
		loaded = full[:bits/8]
	default:
		masked = true
	}
	return func(l *attrs) {
		expression(l, "payload", func(d *attrs) {
			d.u32(unix.NFTA_PAYLOAD_DREG, unix.NFT_REG_1)
			d.u32(unix.NFTA_PAYLOAD_BASE, unix.NFT_PAYLOAD_NETWORK_HEADER)
			d.u32(unix.NFTA_PAYLOAD_OFFSET, offset)
			d.u32(unix.NFTA_PAYLOAD_LEN, uint32(len(loaded)))
		})
		if masked {
			expression(l, "bitwise", func(d *attrs) {
				d.u32(unix.NFTA_BITWISE_SREG, unix.NFT_REG_1)
				d.u32(unix.NFTA_BITWISE_DREG, unix.NFT_REG_1)
				d.u32(unix.NFTA_BITWISE_LEN, uint32(len(loaded)))
				d.nest(unix.NFTA_BITWISE_MASK, func(v *attrs) { v.put(unix.NFTA_DATA_VALUE, prefixMask(bits, len(loaded))) })
				d.nest(unix.NFTA_BITWISE_XOR, func(v *attrs) { v.put(unix.NFTA_DATA_VALUE, make([]byte, len(loaded))) })
			})
		}
		cmpEq(l, loaded)
	}, rest, true
}

// prefixMask is the mask of a prefix of bits over n bytes.
func prefixMask(bits, n int) []byte {
	mask := make([]byte, n)
	for i := range mask {
		switch {
		case bits >= 8:
			mask[i], bits = 0xff, bits-8
		case bits > 0:
			mask[i], bits = byte(0xff<<(8-bits)), 0
		}
	}
	return mask
}

// fibSaddrLocal is `fib saddr type local`: [ fib saddr type => reg 1 ]
// [ cmp eq reg 1 RTN_LOCAL ] (the route type a host-endian number).
func fibSaddrLocal(l *attrs) {
	expression(l, "fib", func(d *attrs) {
		d.u32(unix.NFTA_FIB_FLAGS, unix.NFTA_FIB_F_SADDR)
		d.u32(unix.NFTA_FIB_RESULT, unix.NFT_FIB_RESULT_ADDRTYPE)
		d.u32(unix.NFTA_FIB_DREG, unix.NFT_REG_1)
	})
	cmpEq(l, nativeUint32(unix.RTN_LOCAL))
}
