package netns

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/roottest"
)

// sock_diag finds the listening TCP and the unconnected UDP sockets of a
// named namespace, and none of the host's.
func TestIntegrationSocketPortsOfANamespace(t *testing.T) {
	roottest.Require(t, "creates a network namespace")
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	name := fmt.Sprintf("svclab-socktest-%d", os.Getpid())
	tcpPort, udpPort := listenInNewNamespace(t, name)
	defer netns.DeleteNamed(name) //nolint:errcheck // best effort

	tcp, err := socketPorts(name, unix.IPPROTO_TCP, stateListen)
	if err != nil {
		t.Fatal(err)
	}
	if !tcp[tcpPort] || len(tcp) != 1 {
		t.Errorf("listening TCP ports %v, want only %d (the host's %s is not in the namespace)", tcp, tcpPort, host.Addr())
	}
	udp, err := socketPorts(name, unix.IPPROTO_UDP, stateClose)
	if err != nil {
		t.Fatal(err)
	}
	if !udp[udpPort] || len(udp) != 1 {
		t.Errorf("UDP ports %v, want only %d", udp, udpPort)
	}
}

// listenInNewNamespace makes the named namespace and opens a TCP listener
// (IPv6, dual-stack) and a UDP socket in it, which stay open until the
// test ends; it returns their ports.
func listenInNewNamespace(t *testing.T, name string) (tcpPort, udpPort int) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	ns, err := netns.NewNamed(name) // and switches this thread into it
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	defer netns.Set(orig) //nolint:errcheck // the thread is locked; the test fails below if it matters
	l, err := net.Listen("tcp", "[::]:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	u, err := net.ListenPacket("udp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	return l.Addr().(*net.TCPAddr).Port, u.LocalAddr().(*net.UDPAddr).Port
}
