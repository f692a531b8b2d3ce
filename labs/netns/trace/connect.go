package trace

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/labs/netns/network"
)

// maxAnswer bounds what is read of the server's answer.
const maxAnswer = 4096

// connection is the traced connection as its client saw it.
type connection struct {
	local  netip.AddrPort
	answer string
	err    error
}

// connect opens one connection from inside namespace ns, in the family of
// to (tcp4/udp4 or tcp6/udp6). TCP asks a netexec
// server GET /hostname (an answer that is not HTTP is kept as it came);
// UDP sends "hostname" and waits for a datagram. The connection is closed
// before connect returns; its conntrack entries stay (TIME_WAIT, or UDP's
// timeout).
func connect(ctx context.Context, ns, proto string, to netip.AddrPort, timeout time.Duration) connection {
	var c connection
	err := network.Do(ns, func() error {
		src, err := sourceFor(to.Addr())
		if err != nil {
			return err
		}
		d := net.Dialer{Timeout: timeout, Control: bindFirst(src, &c.local)}
		conn, err := d.DialContext(ctx, proto+family(to.Addr()), to.String())
		if err != nil {
			return err
		}
		defer conn.Close()
		c.local = addrPort(conn.LocalAddr())
		if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
			return err
		}
		if proto == "udp" {
			c.answer, err = askUDP(conn)
		} else {
			c.answer, err = askHTTP(conn, to)
		}
		return err
	})
	c.err = err
	return c
}

// sourceFor is the source address the kernel picks for dst in the calling
// thread's namespace (`ip route get DST`'s src).
func sourceFor(dst netip.Addr) (netip.Addr, error) {
	routes, err := netlink.RouteGet(dst.AsSlice())
	if err != nil || len(routes) == 0 {
		return netip.Addr{}, fmt.Errorf("ip route get %s: %v", dst, err)
	}
	src, ok := netip.AddrFromSlice(routes[0].Src)
	if !ok || routes[0].Src == nil {
		return netip.Addr{}, fmt.Errorf("ip route get %s: no source address", dst)
	}
	return src.Unmap(), nil
}

// family is the dial network suffix of ip: "4" or "6".
func family(ip netip.Addr) string {
	if ip.Is6() {
		return "6"
	}
	return "4"
}

// bindFirst binds the socket to src and a port the kernel picks before it
// connects, and stores that address in local: a connection that fails
// (refused, timed out) is still traced by its source port.
func bindFirst(src netip.Addr, local *netip.AddrPort) func(string, string, syscall.RawConn) error {
	return func(_, _ string, rc syscall.RawConn) error {
		var bindErr error
		err := rc.Control(func(fd uintptr) {
			var sa unix.Sockaddr
			if src.Is6() {
				sa = &unix.SockaddrInet6{Addr: src.As16()}
			} else {
				sa = &unix.SockaddrInet4{Addr: src.As4()}
			}
			if bindErr = unix.Bind(int(fd), sa); bindErr != nil {
				return
			}
			switch got, err := unix.Getsockname(int(fd)); in := got.(type) {
			case *unix.SockaddrInet4:
				if err == nil {
					*local = netip.AddrPortFrom(netip.AddrFrom4(in.Addr), uint16(in.Port))
				}
			case *unix.SockaddrInet6:
				if err == nil {
					*local = netip.AddrPortFrom(netip.AddrFrom16(in.Addr), uint16(in.Port))
				}
			}
		})
		if err != nil {
			return err
		}
		return bindErr
	}
}

// addrPort is a socket address in either family (an IPv4 one unmapped).
func addrPort(a net.Addr) netip.AddrPort {
	var ap netip.AddrPort
	switch a := a.(type) {
	case *net.TCPAddr:
		ap = a.AddrPort()
	case *net.UDPAddr:
		ap = a.AddrPort()
	default:
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

func askHTTP(conn net.Conn, to netip.AddrPort) (string, error) {
	if _, err := io.WriteString(conn, "GET /hostname HTTP/1.1\r\nHost: "+to.String()+"\r\nUser-Agent: svclab-trace\r\n\r\n"); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(io.LimitReader(conn, maxAnswer)), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	return strings.TrimSpace(string(body)), err
}

func askUDP(conn net.Conn) (string, error) {
	if _, err := io.WriteString(conn, "hostname"); err != nil {
		return "", err
	}
	buf := make([]byte, maxAnswer)
	n, err := conn.Read(buf)
	return strings.TrimSpace(string(buf[:n])), err
}
