package nlbatch

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The tables the captures in testdata/nft-1.0.6 were sent to (the
// nftables golden renders), whose set definitions give Compile the types.
var captureTables = map[string]string{
	"ip":  "../testdata/clusterip_3_endpoints.golden",
	"ip6": "../testdata/ipv6.golden",
}

// TestCompileSendsWhatNFTSends compiles each transaction of
// testdata/nft-1.0.6 and compares its batch with the one nft 1.0.6 sent
// for the same text (its sendmsg, captured with strace), message by
// message and attribute by attribute. Two attributes differ by design and
// are matched, not skipped: the anonymous maps' NFTA_SET_ID (nft numbers
// them after the sets in its cache: the test starts Compile where nft
// started) and the NFTA_SET_ELEM_LIST_SET_ID nft adds to elements of
// named sets (an ID from its cache; the kernel finds a named set by name
// first, so Compile leaves it out and the test drops it from nft's).
func TestCompileSendsWhatNFTSends(t *testing.T) {
	captures, err := filepath.Glob("testdata/nft-1.0.6/*.nft")
	if err != nil || len(captures) == 0 {
		t.Fatalf("no captures in testdata/nft-1.0.6 (%v)", err)
	}
	for _, path := range captures {
		name := strings.TrimSuffix(filepath.Base(path), ".nft")
		t.Run(name, func(t *testing.T) {
			text := readFile(t, path)
			family := strings.Fields(text)[2]
			sets := map[string]SetType{}
			LearnSets(family, "kube-proxy", readFile(t, captureTables[family]), sets)
			want := parseBatch(t, readHexDump(t, strings.TrimSuffix(path, ".nft")+".hex"))
			b, ok := compile(family, "kube-proxy", text, sets, firstSetID(want))
			if !ok {
				t.Fatalf("Compile refused %s", path)
			}
			got := parseBatch(t, b.Bytes())
			for i := range want {
				want[i].dropNamedSetID()
			}
			if len(got) != len(want) {
				t.Fatalf("%d messages, nft sent %d", len(got), len(want))
			}
			for i := range want {
				if !got[i].equal(want[i]) {
					t.Errorf("message %d:\n got %s\nwant %s", i, got[i], want[i])
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// readHexDump reads strace's `-e write=` dump: lines " | OFFSET  HEX…  ASCII |".
func readHexDump(t *testing.T, path string) []byte {
	t.Helper()
	var out []byte
	for _, line := range strings.Split(readFile(t, path), "\n") {
		if !strings.HasPrefix(line, " | ") || len(line) < 60 {
			continue
		}
		hexPart := strings.ReplaceAll(line[10:58], " ", "")
		b, err := hex.DecodeString(hexPart)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		out = append(out, b...)
	}
	return out
}

// sentMessage is one message of a batch, its attributes split at the top
// level.
type sentMessage struct {
	header syscall.NlMsghdr
	nfgen  []byte
	attrs  []syscall.NetlinkRouteAttr
}

func parseBatch(t *testing.T, data []byte) []sentMessage {
	t.Helper()
	msgs, err := syscall.ParseNetlinkMessage(data)
	if err != nil {
		t.Fatalf("batch does not parse: %v", err)
	}
	var out []sentMessage
	for _, m := range msgs {
		s := sentMessage{header: m.Header, nfgen: m.Data[:4]}
		s.header.Len = 0 // follows from the attributes
		for rest := m.Data[4:]; len(rest) > 0; {
			if len(rest) < 4 {
				t.Fatalf("trailing bytes %x", rest)
			}
			l := int(binary.NativeEndian.Uint16(rest))
			if l < 4 || l > len(rest) {
				t.Fatalf("attribute length %d of %d bytes", l, len(rest))
			}
			s.attrs = append(s.attrs, syscall.NetlinkRouteAttr{
				Attr:  syscall.RtAttr{Len: uint16(l), Type: binary.NativeEndian.Uint16(rest[2:])},
				Value: rest[4:l],
			})
			rest = rest[min(len(rest), (l+3)&^3):]
		}
		out = append(out, s)
	}
	return out
}

// firstSetID is the NFTA_SET_ID of the batch's first NFT_MSG_NEWSET.
func firstSetID(batch []sentMessage) uint32 {
	for _, m := range batch {
		if m.header.Type&0xff == unix.NFT_MSG_NEWSET {
			for _, a := range m.attrs {
				if a.Attr.Type == unix.NFTA_SET_ID {
					return binary.BigEndian.Uint32(a.Value)
				}
			}
		}
	}
	return 1
}

// dropNamedSetID drops NFTA_SET_ELEM_LIST_SET_ID from an element message
// of a named set.
func (m *sentMessage) dropNamedSetID() {
	if typ := m.header.Type & 0xff; m.header.Type>>8 != unix.NFNL_SUBSYS_NFTABLES || (typ != unix.NFT_MSG_NEWSETELEM && typ != unix.NFT_MSG_DELSETELEM) {
		return
	}
	var kept []syscall.NetlinkRouteAttr
	named := false
	for _, a := range m.attrs {
		if a.Attr.Type == unix.NFTA_SET_ELEM_LIST_SET && string(a.Value) != anonymousMapName+"\x00" {
			named = true
		}
	}
	for _, a := range m.attrs {
		if named && a.Attr.Type == unix.NFTA_SET_ELEM_LIST_SET_ID {
			continue
		}
		kept = append(kept, a)
	}
	m.attrs = kept
}

func (m sentMessage) equal(o sentMessage) bool {
	if m.header != o.header || !bytes.Equal(m.nfgen, o.nfgen) || len(m.attrs) != len(o.attrs) {
		return false
	}
	for i := range m.attrs {
		if m.attrs[i].Attr != o.attrs[i].Attr || !bytes.Equal(m.attrs[i].Value, o.attrs[i].Value) {
			return false
		}
	}
	return true
}

func (m sentMessage) String() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(strings.ReplaceAll(hex.Dump(m.nfgen), "\n", " ")))
	for _, a := range m.attrs {
		b.WriteString(" [")
		b.WriteString(hex.EncodeToString(binary.NativeEndian.AppendUint16(nil, a.Attr.Type)))
		b.WriteString(" ")
		b.WriteString(hex.EncodeToString(a.Value))
		b.WriteString("]")
	}
	return b.String()
}
