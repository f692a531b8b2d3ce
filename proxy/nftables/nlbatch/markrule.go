package nlbatch

import (
	"encoding/binary"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxCommentLen is nft's limit on a rule's comment (NFT_USERDATA_MAXLEN's
// share that nft allows a comment).
const maxCommentLen = 128

// cutComment splits `RULE comment "TEXT"` into the rule and the comment
// (empty without one); ok is false for a comment nft would not take back
// as written (a quote inside, over its length).
func cutComment(text string) (rule, comment string, ok bool) {
	i := strings.LastIndex(text, ` comment "`)
	if i < 0 {
		return text, "", !strings.Contains(text, `"`)
	}
	rule, quoted := text[:i], text[i+len(` comment "`):]
	comment, ok = strings.CutSuffix(quoted, `"`)
	if !ok || comment == "" || len(comment) > maxCommentLen || strings.ContainsAny(comment, "\"\\\n") || strings.Contains(rule, `"`) {
		return "", "", false
	}
	return rule, comment, true
}

// userdataComment is a rule's or a set element's userdata holding its
// comment, as nft writes it: one nftnl TLV (NFTNL_UDATA_RULE_COMMENT,
// NFTNL_UDATA_SET_ELEM_COMMENT: both type 0) of the NUL-terminated text.
func userdataComment(comment string) []byte {
	u := []byte{udataComment, byte(len(comment) + 1)}
	return append(append(u, comment...), 0)
}

// markOr is `mark set mark or 0xVALUE`: [ meta load mark => reg 1 ]
// [ bitwise reg 1 = ( reg 1 & ^VALUE ) ^ VALUE ] [ meta set mark with reg 1 ].
type markOr struct{ value uint32 }

// parseMarkOr reads the rule as knftables writes it (eight hex digits).
func parseMarkOr(text string) (markOr, bool) {
	hex, ok := strings.CutPrefix(text, "mark set mark or 0x")
	if !ok || len(hex) != 8 {
		return markOr{}, false
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil {
		return markOr{}, false
	}
	return markOr{value: uint32(v)}, true
}

// expressions puts the rule's three expressions; the mark is a host-endian
// number, so are its mask and xor.
func (m markOr) expressions(l *attrs) {
	metaLoad(l, unix.NFT_META_MARK)
	expression(l, "bitwise", func(d *attrs) {
		d.u32(unix.NFTA_BITWISE_SREG, unix.NFT_REG_1)
		d.u32(unix.NFTA_BITWISE_DREG, unix.NFT_REG_1)
		d.u32(nftaBitwiseOp, nftBitwiseBool)
		d.u32(unix.NFTA_BITWISE_LEN, 4)
		d.nest(unix.NFTA_BITWISE_MASK, func(v *attrs) { v.put(unix.NFTA_DATA_VALUE, nativeUint32(^m.value)) })
		d.nest(unix.NFTA_BITWISE_XOR, func(v *attrs) { v.put(unix.NFTA_DATA_VALUE, nativeUint32(m.value)) })
	})
	expression(l, "meta", func(d *attrs) {
		d.u32(unix.NFTA_META_KEY, unix.NFT_META_MARK)
		d.u32(unix.NFTA_META_SREG, unix.NFT_REG_1)
	})
}

// The bitwise expression's operation (NFTA_BITWISE_OP, NFT_BITWISE_BOOL:
// mask and xor), which nft 1.0.6 sends for a mark's `or` (not for a
// prefix's mask, parseAddressMatch).
const (
	nftaBitwiseOp  = 6
	nftBitwiseBool = 0
)

// expressions puts a verdict rule's one expression: [ immediate reg 0
// goto -> CHAIN ] (or jump).
func (v verdict) expressions(l *attrs) {
	expression(l, "immediate", func(d *attrs) {
		d.u32(unix.NFTA_IMMEDIATE_DREG, unix.NFT_REG_VERDICT)
		d.nest(unix.NFTA_IMMEDIATE_DATA, func(data *attrs) {
			data.nest(unix.NFTA_DATA_VERDICT, func(vd *attrs) {
				vd.u32(unix.NFTA_VERDICT_CODE, uint32(v.code))
				vd.str(unix.NFTA_VERDICT_CHAIN, v.chain)
			})
		})
	})
}

// nativeUint32 is v in host byte order, as nft holds marks and route types.
func nativeUint32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }
