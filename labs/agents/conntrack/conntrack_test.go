package conntrack

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/network"
)

// nla builds a netlink attribute: host-endian header, padded to 4 bytes.
func nla(typ uint16, nested bool, data []byte) []byte {
	if nested {
		typ |= 1 << 15
	}
	b := make([]byte, 4, 4+len(data)+3)
	binary.NativeEndian.PutUint16(b[0:2], uint16(4+len(data)))
	binary.NativeEndian.PutUint16(b[2:4], typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func tuple(src, dst string, sport, dport uint16) []byte {
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	sp, dp := make([]byte, 2), make([]byte, 2)
	binary.BigEndian.PutUint16(sp, sport)
	binary.BigEndian.PutUint16(dp, dport)
	return cat(
		nla(ctaTupleIP, true, cat(nla(ctaIPv4Src, false, s[:]), nla(ctaIPv4Dst, false, d[:]))),
		nla(ctaTupleProto, true, cat(nla(ctaProtoNum, false, []byte{6}), nla(ctaProtoSrcPort, false, sp), nla(ctaProtoDstPort, false, dp))),
	)
}

func TestParseFlow(t *testing.T) {
	status := make([]byte, 4)
	binary.BigEndian.PutUint32(status, StatusAssured|StatusConfirmed|StatusSrcNAT|StatusDstNAT|StatusSeenReply)
	timeout := make([]byte, 4)
	binary.BigEndian.PutUint32(timeout, 119)
	// The seed 004 connection as HOSTA's conntrack holds it.
	msg := cat([]byte{2, 0, 0, 0},
		nla(ctaTupleOrig, true, tuple("192.168.55.230", "192.168.16.73", 41234, 30000)),
		nla(ctaTupleReply, true, tuple("10.100.81.180", "10.100.40.0", 3000, 41234)),
		nla(ctaStatus, false, status),
		nla(ctaTimeout, false, timeout),
		nla(ctaProtoinfo, true, nla(ctaProtoinfoTCP, true, nla(ctaProtoinfoTCPState, false, []byte{7}))),
	)
	f, err := parseFlow(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := "tcp 6 119 TIME_WAIT src=192.168.55.230 dst=192.168.16.73 sport=41234 dport=30000 src=10.100.81.180 dst=10.100.40.0 sport=3000 dport=41234 [ASSURED] [SNAT] [DNAT] mark=0"
	if f.String() != want {
		t.Errorf("got  %s\nwant %s", f, want)
	}
	if !f.SrcNAT() || !f.DstNAT() {
		t.Errorf("NAT bits: %+v", f)
	}
	if _, err := parseFlow(cat([]byte{2, 0, 0, 0}, []byte{200, 0, 1, 0})); err == nil {
		t.Errorf("a truncated attribute must be an error")
	}
}

// TestIntegrationDumpSeesNAT makes a connection that is DNATed and SNATed
// inside a fresh namespace and reads its entry back over netlink.
func TestIntegrationDumpSeesNAT(t *testing.T) {
	roottest.Require(t, "creates a network namespace and iptables rules in it")
	ns := roottest.Netns(t, "svclab-conntrack-test")
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("ip", "-n", ns, "addr", "add", "10.0.0.1/32", "dev", "lo")
	run("ip", "-n", ns, "addr", "add", "10.0.0.2/32", "dev", "lo")
	run("ip", "netns", "exec", ns, "iptables", "-w", "-t", "nat", "-A", "OUTPUT", "-d", "10.0.0.1", "-p", "tcp", "--dport", "80", "-j", "DNAT", "--to-destination", "10.0.0.1:8080")
	run("ip", "netns", "exec", ns, "iptables", "-w", "-t", "nat", "-A", "POSTROUTING", "-d", "10.0.0.1", "-p", "tcp", "--dport", "8080", "-j", "SNAT", "--to-source", "10.0.0.2")

	var local netip.AddrPort
	err := network.Do(ns, func() error {
		ln, err := net.Listen("tcp4", "10.0.0.1:8080")
		if err != nil {
			return err
		}
		defer ln.Close()
		c, err := net.Dial("tcp4", "10.0.0.1:80")
		if err != nil {
			return err
		}
		defer c.Close()
		s, err := ln.Accept()
		if err != nil {
			return err
		}
		s.Close()
		local = c.LocalAddr().(*net.TCPAddr).AddrPort()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	flows, err := Dump(ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flows {
		if f.Orig.Src.Port() == local.Port() && f.Orig.Dst == netip.MustParseAddrPort("10.0.0.1:80") {
			if f.Reply.Src != netip.MustParseAddrPort("10.0.0.1:8080") || f.Reply.Dst.Addr() != netip.MustParseAddr("10.0.0.2") {
				t.Errorf("reply tuple %v, want from 10.0.0.1:8080 to 10.0.0.2", f.Reply)
			}
			if !f.DstNAT() || !f.SrcNAT() {
				t.Errorf("status %#x: want both DNAT and SNAT bits: %s", f.Status, f)
			}
			return
		}
	}
	t.Fatalf("no entry for %s → 10.0.0.1:80 among %d flows: %v", local, len(flows), flows)
}

func tuple6(src, dst string, sport, dport uint16) []byte {
	s, d := netip.MustParseAddr(src).As16(), netip.MustParseAddr(dst).As16()
	sp, dp := make([]byte, 2), make([]byte, 2)
	binary.BigEndian.PutUint16(sp, sport)
	binary.BigEndian.PutUint16(dp, dport)
	return cat(
		nla(ctaTupleIP, true, cat(nla(ctaIPv6Src, false, s[:]), nla(ctaIPv6Dst, false, d[:]))),
		nla(ctaTupleProto, true, cat(nla(ctaProtoNum, false, []byte{17}), nla(ctaProtoSrcPort, false, sp), nla(ctaProtoDstPort, false, dp))),
	)
}

// TestParseIPv6Flow: an inet6 entry (a UDP connection to an IPv6
// ClusterIP, DNATed to a pod) reads as conntrack -L prints it.
func TestParseIPv6Flow(t *testing.T) {
	status := make([]byte, 4)
	binary.BigEndian.PutUint32(status, StatusConfirmed|StatusDstNAT|StatusSeenReply)
	timeout := make([]byte, 4)
	binary.BigEndian.PutUint32(timeout, 29)
	msg := cat([]byte{10, 0, 0, 0}, // AF_INET6
		nla(ctaTupleOrig, true, tuple6("fd00:10:244:1::5", "fd00:10:96::a", 40000, 53)),
		nla(ctaTupleReply, true, tuple6("fd00:10:244:2::3", "fd00:10:244:1::5", 53, 40000)),
		nla(ctaStatus, false, status),
		nla(ctaTimeout, false, timeout),
	)
	f, err := parseFlow(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := "udp 17 29 src=fd00:10:244:1::5 dst=fd00:10:96::a sport=40000 dport=53 src=fd00:10:244:2::3 dst=fd00:10:244:1::5 sport=53 dport=40000 [DNAT] mark=0"
	if f.String() != want {
		t.Errorf("got  %s\nwant %s", f, want)
	}
	if f.Family() != "ipv6" || !f.DstNAT() || f.SrcNAT() {
		t.Errorf("family %s, DNAT %v, SNAT %v: want ipv6, DNAT only", f.Family(), f.DstNAT(), f.SrcNAT())
	}
}

// TestIntegrationDumpSeesIPv6NAT is TestIntegrationDumpSeesNAT in IPv6:
// ip6tables DNAT and SNAT between two ULA addresses, and the inet6 entry
// read back over netlink with both NAT bits.
func TestIntegrationDumpSeesIPv6NAT(t *testing.T) {
	roottest.Require(t, "creates a network namespace and ip6tables rules in it")
	ns := roottest.Netns(t, "svclab-conntrack6-test")
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	roottest.AddLocalAddrs(t, ns, "lo", "fd00::1/128", "fd00::2/128")
	run("ip", "netns", "exec", ns, "ip6tables", "-w", "-t", "nat", "-A", "OUTPUT", "-d", "fd00::1", "-p", "tcp", "--dport", "80", "-j", "DNAT", "--to-destination", "[fd00::1]:8080")
	run("ip", "netns", "exec", ns, "ip6tables", "-w", "-t", "nat", "-A", "POSTROUTING", "-d", "fd00::1", "-p", "tcp", "--dport", "8080", "-j", "SNAT", "--to-source", "fd00::2")

	var local netip.AddrPort
	err := network.Do(ns, func() error {
		ln, err := net.Listen("tcp6", "[fd00::1]:8080")
		if err != nil {
			return err
		}
		defer ln.Close()
		c, err := net.Dial("tcp6", "[fd00::1]:80")
		if err != nil {
			return err
		}
		defer c.Close()
		s, err := ln.Accept()
		if err != nil {
			return err
		}
		s.Close()
		local = c.LocalAddr().(*net.TCPAddr).AddrPort()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	flows, err := Dump(ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flows {
		if f.Orig.Src.Port() == local.Port() && f.Orig.Dst == netip.MustParseAddrPort("[fd00::1]:80") {
			if f.Reply.Src != netip.MustParseAddrPort("[fd00::1]:8080") || f.Reply.Dst.Addr() != netip.MustParseAddr("fd00::2") {
				t.Errorf("reply tuple %v, want from [fd00::1]:8080 to fd00::2", f.Reply)
			}
			if !f.DstNAT() || !f.SrcNAT() || f.Family() != "ipv6" {
				t.Errorf("status %#x, family %s: want both NAT bits in an ipv6 entry: %s", f.Status, f.Family(), f)
			}
			return
		}
	}
	t.Fatalf("no entry for %s → [fd00::1]:80 among %d flows: %v", local, len(flows), flows)
}
