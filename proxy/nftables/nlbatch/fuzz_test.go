package nlbatch

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzCompile: whatever the text, Compile neither panics nor takes a
// transaction it cannot write whole; a batch it returns is well-formed
// netlink (every message's and every attribute's length, nested ones
// included, within its parent), ends with NFNL_MSG_BATCH_END, stays within
// maxBatchBytes, and is the same batch when compiled again.
func FuzzCompile(f *testing.F) {
	captures, _ := filepath.Glob("testdata/nft-1.0.6/*.nft")
	for _, path := range captures {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("add element ip kube-proxy service-ips { 10.96.0.1 . udp . 53 : jump service-a }")
	f.Add("delete element ip kube-proxy service-nodeports { sctp . 30000 }")
	f.Add(`add rule ip kube-proxy external-a mark set mark or 0x00004000 comment "masquerade"`)
	sets := map[string]SetType{}
	for _, family := range []string{"ip", "ip6"} {
		data, err := os.ReadFile(captureTables[family])
		if err != nil {
			f.Fatal(err)
		}
		LearnSets(family, "kube-proxy", string(data), sets)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, family := range []string{"ip", "ip6"} {
			b, ok := Compile(family, "kube-proxy", text, sets)
			if !ok {
				continue
			}
			data := b.Bytes()
			if b.Messages() == 0 || b.size > maxBatchBytes {
				t.Fatalf("%d messages, %d bytes", b.Messages(), b.size)
			}
			msgs, err := syscall.ParseNetlinkMessage(data)
			if err != nil {
				t.Fatalf("batch does not parse: %v", err)
			}
			if len(msgs) != b.Messages()+2 || msgs[len(msgs)-1].Header.Type != unix.NFNL_MSG_BATCH_END {
				t.Fatalf("%d netlink messages for %d, last of type %#x", len(msgs), b.Messages(), msgs[len(msgs)-1].Header.Type)
			}
			for _, m := range msgs[1 : len(msgs)-1] {
				if !wellFormed(m.Data[4:]) {
					t.Fatalf("message of type %#x has malformed attributes: %x", m.Header.Type, m.Data)
				}
			}
			again, _ := Compile(family, "kube-proxy", text, sets)
			if !bytes.Equal(again.Bytes(), data) {
				t.Fatal("compiling the same text twice gave two batches")
			}
		}
	})
}

// wellFormed reports whether attrs is a list of attributes whose lengths
// fit, recursing into the nested ones.
func wellFormed(attrs []byte) bool {
	for len(attrs) > 0 {
		if len(attrs) < 4 {
			return false
		}
		l := int(binary.NativeEndian.Uint16(attrs))
		typ := binary.NativeEndian.Uint16(attrs[2:])
		if l < 4 || l > len(attrs) {
			return false
		}
		if typ&unix.NLA_F_NESTED != 0 && !wellFormed(attrs[4:l]) {
			return false
		}
		attrs = attrs[min(len(attrs), (l+3)&^3):]
	}
	return true
}
