package nftables

import (
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// tableMsg is the payload of an NFT_MSG_NEWTABLE message as the kernel
// sends it: the nfgenmsg, the table's name, flags and use count.
func tableMsg(family uint8, name string) []byte {
	msg := (&nl.Nfgenmsg{NfgenFamily: family, Version: nl.NFNETLINK_V0}).Serialize()
	msg = append([]byte(nil), msg...)
	msg = append(msg, nl.NewRtAttr(unix.NFTA_TABLE_NAME, nl.ZeroTerminated(name)).Serialize()...)
	msg = append(msg, nl.NewRtAttr(unix.NFTA_TABLE_FLAGS, nl.Uint32Attr(0)).Serialize()...)
	msg = append(msg, nl.NewRtAttr(unix.NFTA_TABLE_USE|unix.NLA_F_NET_BYTEORDER, nl.Uint32Attr(7)).Serialize()...)
	return msg
}

// TestParseTableMsgReadsFamilyAndName: the family comes from the
// nfgenmsg and the name from NFTA_TABLE_NAME without its NUL; a message
// too short for an nfgenmsg is an error, not a panic.
func TestParseTableMsgReadsFamilyAndName(t *testing.T) {
	family, name, err := parseTableMsg(tableMsg(unix.NFPROTO_IPV6, "kube-proxy"))
	if err != nil || family != unix.NFPROTO_IPV6 || name != "kube-proxy" {
		t.Errorf("parseTableMsg = %d, %q, %v; want %d, kube-proxy", family, name, err, unix.NFPROTO_IPV6)
	}
	if _, _, err := parseTableMsg([]byte{2, 0}); err == nil {
		t.Error("a 2-byte message parsed")
	}
}

// FuzzParseTableMsg: whatever the kernel (or a corrupt buffer) sends,
// parseTableMsg returns an error or a name, never panics, and reads the
// family from the first byte.
func FuzzParseTableMsg(f *testing.F) {
	f.Add(tableMsg(unix.NFPROTO_IPV4, "kube-proxy"))
	f.Add(tableMsg(unix.NFPROTO_INET, ""))
	f.Add([]byte{2, 0, 0, 0, 5, 0, 1, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, msg []byte) {
		family, _, err := parseTableMsg(msg)
		if err == nil && family != msg[0] {
			t.Errorf("family %d from a message starting with %d", family, msg[0])
		}
	})
}
