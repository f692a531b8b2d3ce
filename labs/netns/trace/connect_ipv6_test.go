package trace

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os/exec"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/netexec"
	"github.com/svclab/svclab/labs/netns/network"
)

// TestSaveCommandPerFamily: an IPv6 connection's counters are read with
// the ip6tables program of the lab's backend, an IPv4 one's as before.
func TestSaveCommandPerFamily(t *testing.T) {
	for _, c := range []struct {
		backend string
		ipv6    bool
		want    string
	}{
		{"iptables", false, "iptables-save"},
		{"iptables-legacy", false, "iptables-legacy-save"},
		{"iptables", true, "ip6tables-save"},
		{"iptables-legacy", true, "ip6tables-legacy-save"},
		{"iptables-nft", true, "ip6tables-nft-save"},
	} {
		if got := saveCommand(c.backend, c.ipv6); got != c.want {
			t.Errorf("saveCommand(%s, ipv6 %v) = %s, want %s", c.backend, c.ipv6, got, c.want)
		}
	}
}

// TestIntegrationConnectIPv6 opens the traced connection over IPv6 in a
// fresh namespace: its source is the address `ip -6 route get` picks,
// bound before the connection (so a failed one is traced too), and a
// netexec server on a ULA address answers it, over TCP and UDP.
func TestIntegrationConnectIPv6(t *testing.T) {
	roottest.Require(t, "creates a network namespace with IPv6 addresses in it")
	ns := roottest.Netns(t, "svclab-trace6-test")
	// A pod's addresses are on an interface of its own, not lo.
	for _, args := range [][]string{
		{"link", "add", "eth0", "type", "veth", "peer", "name", "peer0"},
		{"link", "set", "peer0", "up"},
		{"link", "set", "eth0", "up"},
	} {
		if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	roottest.AddLocalAddrs(t, ns, "eth0", "fd00:10:244:1::7/128", "fd00:10:244:1::5/64")
	var s *netexec.Server
	err := network.Do(ns, func() error {
		var err error
		s, err = netexec.Listen(netexec.Options{PodName: "web-1", Ports: []int{0}, UDPPorts: []int{0}, BindAddress: "fd00:10:244:1::7",
			PodIPs: []string{"fd00:10:244:1::7"}, Logger: slog.New(slog.DiscardHandler)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	for proto, addr := range map[string]net.Addr{"tcp": s.Addrs()[0], "udp": s.UDPAddrs()[0]} {
		to := netip.MustParseAddrPort(addr.String())
		c := connect(context.Background(), ns, proto, to, 3*time.Second)
		if c.err != nil || c.answer != "web-1" {
			t.Errorf("%s to %s from %s: answer %q, error %v; want web-1", proto, to, c.local, c.answer, c.err)
		}
		if !c.local.Addr().Is6() || c.local.Port() == 0 {
			t.Errorf("%s to %s: source %s, want an IPv6 address and port", proto, to, c.local)
		}
	}
	closed := netip.MustParseAddrPort(fmt.Sprintf("[fd00:10:244:1::7]:%d", 1))
	c := connect(context.Background(), ns, "tcp", closed, 3*time.Second)
	if c.err == nil || !c.local.IsValid() {
		t.Errorf("to the closed port %s: error %v, source %s; want refused, traced by its bound source", closed, c.err, c.local)
	}
}
