package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"strings"
	"testing"
)

// fakeBzImage builds the parts of a bzImage that bzImagePayload reads: the
// setup header (setup_sects, "HdrS", version, payload_offset/length) and a
// gzip payload.
func fakeBzImage(t *testing.T, payload []byte) []byte {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(payload)
	zw.Close()
	const setupSects = 3
	b := make([]byte, (setupSects+1)*512+0x100)
	b[0x1f1] = setupSects
	copy(b[0x202:], "HdrS")
	binary.LittleEndian.PutUint16(b[0x206:], 0x20f)
	binary.LittleEndian.PutUint32(b[0x248:], 0x100)
	binary.LittleEndian.PutUint32(b[0x24c:], uint32(gz.Len()))
	b = append(b, gz.Bytes()...)
	return append(b, 0xde, 0xad, 0xbe, 0xef) // what follows the payload in a real one
}

func TestBzImagePayload(t *testing.T) {
	img := fakeBzImage(t, []byte("\x7fELF kernel"))
	p, err := bzImagePayload(img)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decompress(context.Background(), p)
	if err != nil || string(out) != "\x7fELF kernel" {
		t.Fatalf("decompress: %q, %v", out, err)
	}
	if err := checkPVH(out); err == nil {
		t.Fatal("not an ELF: checkPVH must fail")
	}
	if _, err := bzImagePayload([]byte(strings.Repeat("x", 4096))); err == nil {
		t.Fatal("no setup header: must fail")
	}
	if _, err := decompress(context.Background(), []byte("BZh9")); err == nil {
		t.Fatal("an unknown compression is an error")
	}
}
