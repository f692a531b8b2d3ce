package nlbatch

import (
	"encoding/binary"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A Service chain's rule in upstream v1.36's nftables proxier:
//
//	meta l4proto tcp dnat ip addr . port to numgen random mod 3 map { 0 : 10.244.1.1 . 8080 , 1 : … }
//
// nft writes it as an anonymous constant map (NFT_MSG_NEWSET, its elements
// in NFT_MSG_NEWSETELEM) and the rule [ meta load l4proto => reg 1 ]
// [ cmp eq reg 1 P ] [ numgen reg 1 = random mod N ] [ lookup reg 1 set
// __map%d dreg 1 ] [ nat dnat FAMILY addr_min reg 1 proto_min reg R ].

const (
	anonymousMapName = "__map%d" // the kernel numbers it
	typeInteger      = 4         // nft's integer datatype, numgen's
	typeIPv4Addr     = 7
	typeIPv6Addr     = 8
	typeInetService  = 13
	concatTypeBits   = 6 // nft's concatenated type: each part's type shifted by 6 bits
	byteorderHost    = 1 // nft's BYTEORDER_HOST_ENDIAN

	// nftnl's userdata types (NFTNL_UDATA_SET_*; a rule's or an element's
	// comment, NFTNL_UDATA_RULE_COMMENT and NFTNL_UDATA_SET_ELEM_COMMENT).
	udataSetKeyByteorder  = 0
	udataSetDataByteorder = 1
	udataSetDataInterval  = 6
	udataComment          = 0
)

// dnatTarget is one element of the rule's map: numgen's value, and the
// address and port it picks.
type dnatTarget struct {
	key  uint32
	addr []byte
	port uint16
}

// dnatMapRule is the parsed rule.
type dnatMapRule struct {
	proto   byte
	modulus uint32
	targets []dnatTarget
}

// parseDNATMapRule reads the rule's text for family ("ip" or "ip6"): the
// exact tokens knftables writes, nothing else.
func parseDNATMapRule(family, text string) (dnatMapRule, bool) {
	head := "meta l4proto "
	if !strings.HasPrefix(text, head) {
		return dnatMapRule{}, false
	}
	protoName, rest, _ := strings.Cut(strings.TrimPrefix(text, head), " ")
	proto, ok := protocols[protoName]
	middle := "dnat " + family + " addr . port to numgen random mod "
	if !ok || !strings.HasPrefix(rest, middle) {
		return dnatMapRule{}, false
	}
	modText, rest, _ := strings.Cut(strings.TrimPrefix(rest, middle), " ")
	modulus, err := strconv.ParseUint(modText, 10, 32)
	if err != nil || modulus == 0 || strconv.FormatUint(modulus, 10) != modText {
		return dnatMapRule{}, false
	}
	if !strings.HasPrefix(rest, "map { ") || !strings.HasSuffix(rest, " }") {
		return dnatMapRule{}, false
	}
	addrField := ipv4Addr
	if family == "ip6" {
		addrField = ipv6Addr
	}
	r := dnatMapRule{proto: proto, modulus: uint32(modulus)}
	seen := map[uint32]bool{}
	for _, elem := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(rest, "map { "), " }"), " , ") {
		keyText, value, _ := strings.Cut(elem, " : ")
		addrText, portText, _ := strings.Cut(value, " . ")
		key, err := strconv.ParseUint(keyText, 10, 32)
		if err != nil || strconv.FormatUint(key, 10) != keyText || seen[uint32(key)] {
			return dnatMapRule{}, false
		}
		seen[uint32(key)] = true
		addr, ok := appendField(nil, addrField, addrText)
		if !ok {
			return dnatMapRule{}, false
		}
		port, ok := appendField(nil, inetService, portText)
		if !ok {
			return dnatMapRule{}, false
		}
		r.targets = append(r.targets, dnatTarget{key: uint32(key), addr: addr, port: binary.BigEndian.Uint16(port)})
	}
	return r, true
}

// addRule is `add rule … CHAIN RULE [comment "…"]` of a rule shape it
// knows, appended to the chain (for the Service rule, after its anonymous
// map and the map's elements).
func addRule(b *Batch, family, table, rest, line string) bool {
	chain, text, _ := strings.Cut(rest, " ")
	text, comment, ok := cutComment(text)
	if !ok || !validName(chain) {
		return false
	}
	var exprs func(*attrs)
	if r, ok := parseDNATMapRule(family, text); ok {
		exprs = r.expressions(b.addAnonymousMap(family, table, r, line), family)
	} else if e, ok := parseMatchAction(family, text); ok {
		exprs = e
	} else {
		return false
	}
	var rule attrs
	rule.str(unix.NFTA_RULE_TABLE, table)
	rule.str(unix.NFTA_RULE_CHAIN, chain)
	rule.nest(unix.NFTA_RULE_EXPRESSIONS, exprs)
	if comment != "" {
		rule.put(unix.NFTA_RULE_USERDATA, userdataComment(comment))
	}
	b.add(message{typ: unix.NFT_MSG_NEWRULE, flags: unix.NLM_F_CREATE | unix.NLM_F_APPEND, attrs: rule.b, line: line})
	return true
}

// addAnonymousMap adds the Service rule's map and its elements and
// returns the map's batch ID.
func (b *Batch) addAnonymousMap(family, table string, r dnatMapRule, line string) uint32 {
	b.sets++
	id := b.sets
	addrType, addrLen := uint32(typeIPv4Addr), 4
	if family == "ip6" {
		addrType, addrLen = typeIPv6Addr, 16
	}
	var set attrs
	set.str(unix.NFTA_SET_TABLE, table)
	set.str(unix.NFTA_SET_NAME, anonymousMapName)
	set.u32(unix.NFTA_SET_FLAGS, unix.NFT_SET_ANONYMOUS|unix.NFT_SET_CONSTANT|unix.NFT_SET_MAP)
	set.u32(unix.NFTA_SET_KEY_TYPE, typeInteger)
	set.u32(unix.NFTA_SET_KEY_LEN, 4)
	set.u32(unix.NFTA_SET_DATA_TYPE, addrType<<concatTypeBits|typeInetService)
	set.u32(unix.NFTA_SET_DATA_LEN, uint32(addrLen+4))
	set.u32(unix.NFTA_SET_ID, id)
	set.nest(unix.NFTA_SET_DESC, func(d *attrs) { d.u32(unix.NFTA_SET_DESC_SIZE, uint32(len(r.targets))) })
	set.put(unix.NFTA_SET_USERDATA, setUserdata())
	b.add(message{typ: unix.NFT_MSG_NEWSET, flags: unix.NLM_F_CREATE, attrs: set.b, line: line})

	var elems attrs
	elems.str(unix.NFTA_SET_ELEM_LIST_TABLE, table)
	elems.str(unix.NFTA_SET_ELEM_LIST_SET, anonymousMapName)
	elems.u32(unix.NFTA_SET_ELEM_LIST_SET_ID, id)
	elems.nest(unix.NFTA_SET_ELEM_LIST_ELEMENTS, func(l *attrs) {
		for i, t := range r.targets {
			// libnftnl numbers the list's elements from 1 (the kernel
			// reads them whatever their type); nft's bytes, so the same.
			l.nest(uint16(i+1), func(e *attrs) {
				e.nest(unix.NFTA_SET_ELEM_KEY, func(k *attrs) {
					k.put(unix.NFTA_DATA_VALUE, binary.NativeEndian.AppendUint32(nil, t.key))
				})
				e.nest(unix.NFTA_SET_ELEM_DATA, func(d *attrs) {
					d.put(unix.NFTA_DATA_VALUE, append(binary.BigEndian.AppendUint16(append([]byte{}, t.addr...), t.port), 0, 0))
				})
			})
		}
	})
	b.add(message{typ: unix.NFT_MSG_NEWSETELEM, flags: unix.NLM_F_CREATE, attrs: elems.b, line: line})
	return id
}

// expressions returns the Service rule's expressions over the map of
// batch ID id.
func (r dnatMapRule) expressions(id uint32, family string) func(*attrs) {
	natFamily, protoReg := uint32(unix.NFPROTO_IPV4), uint32(unix.NFT_REG32_01)
	if family == "ip6" {
		natFamily, protoReg = unix.NFPROTO_IPV6, unix.NFT_REG_2
	}
	return func(l *attrs) {
		metaLoad(l, unix.NFT_META_L4PROTO)
		cmpEq(l, []byte{r.proto})
		expression(l, "numgen", func(d *attrs) {
			d.u32(unix.NFTA_NG_DREG, unix.NFT_REG_1)
			d.u32(unix.NFTA_NG_MODULUS, r.modulus)
			d.u32(unix.NFTA_NG_TYPE, unix.NFT_NG_RANDOM)
			d.u32(unix.NFTA_NG_OFFSET, 0)
		})
		expression(l, "lookup", func(d *attrs) {
			d.u32(unix.NFTA_LOOKUP_SREG, unix.NFT_REG_1)
			d.u32(unix.NFTA_LOOKUP_DREG, unix.NFT_REG_1)
			d.str(unix.NFTA_LOOKUP_SET, anonymousMapName)
			d.u32(unix.NFTA_LOOKUP_SET_ID, id)
		})
		expression(l, "nat", func(d *attrs) {
			d.u32(unix.NFTA_NAT_TYPE, unix.NFT_NAT_DNAT)
			d.u32(unix.NFTA_NAT_FAMILY, natFamily)
			d.u32(unix.NFTA_NAT_REG_ADDR_MIN, unix.NFT_REG_1)
			d.u32(unix.NFTA_NAT_REG_PROTO_MIN, protoReg)
		})
	}
}

// expression puts one expression of a rule: its name and its data.
func expression(l *attrs, name string, data func(*attrs)) {
	l.nest(unix.NFTA_LIST_ELEM, func(e *attrs) {
		e.str(unix.NFTA_EXPR_NAME, name)
		e.nest(unix.NFTA_EXPR_DATA, data)
	})
}

// metaLoad puts [ meta load KEY => reg 1 ].
func metaLoad(l *attrs, key uint32) {
	expression(l, "meta", func(d *attrs) {
		d.u32(unix.NFTA_META_KEY, key)
		d.u32(unix.NFTA_META_DREG, unix.NFT_REG_1)
	})
}

// cmpEq puts [ cmp eq reg 1 VALUE ].
func cmpEq(l *attrs, value []byte) {
	expression(l, "cmp", func(d *attrs) {
		d.u32(unix.NFTA_CMP_SREG, unix.NFT_REG_1)
		d.u32(unix.NFTA_CMP_OP, unix.NFT_CMP_EQ)
		d.nest(unix.NFTA_CMP_DATA, func(v *attrs) { v.put(unix.NFTA_DATA_VALUE, value) })
	})
}

// setUserdata is the userdata nft gives the anonymous map: its key in host
// byte order, its data's byte order and interval flag unset (nftnl TLVs of
// host-endian 32-bit values).
func setUserdata() []byte {
	var u []byte
	for _, tlv := range []struct{ typ, value uint32 }{
		{udataSetKeyByteorder, byteorderHost},
		{udataSetDataByteorder, 0},
		{udataSetDataInterval, 0},
	} {
		u = append(u, byte(tlv.typ), 4)
		u = binary.NativeEndian.AppendUint32(u, tlv.value)
	}
	return u
}
