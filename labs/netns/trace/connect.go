package trace

import (
	"bufio"
	"context"
	"fmt"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

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

// connect opens one connection from inside namespace ns. TCP asks a netexec
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
		conn, err := d.DialContext(ctx, proto+"4", to.String())
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
	src, ok := netip.AddrFromSlice(routes[0].Src.To4())
	if !ok {
		return netip.Addr{}, fmt.Errorf("ip route get %s: no source address", dst)
	}
	return src, nil
}

// bindFirst binds the socket to src and a port the kernel picks before it
// connects, and stores that address in local: a connection that fails
// (refused, timed out) is still traced by its source port.
func bindFirst(src netip.Addr, local *netip.AddrPort) func(string, string, syscall.RawConn) error {
	return func(_, _ string, rc syscall.RawConn) error {
		var bindErr error
		err := rc.Control(func(fd uintptr) {
			if bindErr = unix.Bind(int(fd), &unix.SockaddrInet4{Addr: src.As4()}); bindErr != nil {
				return
			}
			sa, err := unix.Getsockname(int(fd))
			if in4, ok := sa.(*unix.SockaddrInet4); ok && err == nil {
				*local = netip.AddrPortFrom(netip.AddrFrom4(in4.Addr), uint16(in4.Port))
			}
		})
		if err != nil {
			return err
		}
		return bindErr
	}
}

func addrPort(a net.Addr) netip.AddrPort {
	switch a := a.(type) {
	case *net.TCPAddr:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(a.IP.To4())), uint16(a.Port))
	case *net.UDPAddr:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(a.IP.To4())), uint16(a.Port))
	}
	return netip.AddrPort{}
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
