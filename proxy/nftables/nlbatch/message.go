package nlbatch

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// attrs builds netlink attributes: a native-endian length and type, the
// payload, padding to four bytes (the length leaves the padding out).
type attrs struct{ b []byte }

func (a *attrs) put(typ uint16, data []byte) {
	a.b = binary.NativeEndian.AppendUint16(a.b, uint16(unix.SizeofNlAttr+len(data)))
	a.b = binary.NativeEndian.AppendUint16(a.b, typ)
	a.b = append(a.b, data...)
	for len(a.b)%unix.NLA_ALIGNTO != 0 {
		a.b = append(a.b, 0)
	}
}

// str puts a NUL-terminated string.
func (a *attrs) str(typ uint16, s string) { a.put(typ, append([]byte(s), 0)) }

// u32 puts a big-endian 32-bit number, as nf_tables wants its numbers.
func (a *attrs) u32(typ uint16, v uint32) { a.put(typ, binary.BigEndian.AppendUint32(nil, v)) }

// nest puts a nested attribute whose payload fill builds.
func (a *attrs) nest(typ uint16, fill func(*attrs)) {
	var in attrs
	fill(&in)
	a.put(typ|unix.NLA_F_NESTED, in.b)
}

// message is one nf_tables request of a batch, before its sequence number.
type message struct {
	typ   uint16 // NFT_MSG_*
	flags uint16 // beyond NLM_F_REQUEST
	attrs []byte
	line  string // the transaction's line it comes from, for errors
}

// appendMessage appends a netlink header, an nfgenmsg and payload:
// subsystem nf_tables unless the type is a batch delimiter.
func appendMessage(b []byte, typ uint16, flags uint16, seq uint32, family uint8, resID uint16, payload []byte) []byte {
	length := unix.SizeofNlMsghdr + 4 + len(payload)
	b = binary.NativeEndian.AppendUint32(b, uint32(length))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = binary.NativeEndian.AppendUint16(b, unix.NLM_F_REQUEST|flags)
	b = binary.NativeEndian.AppendUint32(b, seq)
	b = binary.NativeEndian.AppendUint32(b, 0) // port ID: the kernel's
	b = append(b, family, unix.NFNETLINK_V0)
	b = binary.BigEndian.AppendUint16(b, resID)
	return append(b, payload...)
}
