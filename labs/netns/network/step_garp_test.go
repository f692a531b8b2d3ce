package network

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
)

func TestGratuitousARP(t *testing.T) {
	mac := net.HardwareAddr{0x0e, 0x99, 0xb9, 0x36, 0x06, 0x10}
	got, err := gratuitousARP(mac, netip.MustParseAddr("10.244.1.2"))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0x00, 0x01, // Ethernet
		0x08, 0x00, // IPv4
		6, 4,
		0x00, 0x01, // request
		0x0e, 0x99, 0xb9, 0x36, 0x06, 0x10, 10, 244, 1, 2, // sender: the pod
		0, 0, 0, 0, 0, 0, 10, 244, 1, 2, // target: its own address, no MAC
	}
	if !bytes.Equal(got, want) {
		t.Errorf("gratuitousARP = % x\nwant             % x", got, want)
	}
	for _, bad := range []struct {
		mac net.HardwareAddr
		ip  string
	}{{mac[:5], "10.244.1.2"}, {mac, "fd00::2"}} {
		if _, err := gratuitousARP(bad.mac, netip.MustParseAddr(bad.ip)); err == nil {
			t.Errorf("gratuitousARP(%v, %s) = nil error", bad.mac, bad.ip)
		}
	}
}

func TestHtons(t *testing.T) {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], htons(0x0806))
	if b != [2]byte{0x08, 0x06} {
		t.Errorf("htons(0x0806) is % x in memory, want 08 06", b)
	}
}
