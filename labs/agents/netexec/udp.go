package netexec

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strings"
)

// The UDP server answers agnhost netexec's UDP commands, one datagram
// each, to the address the datagram came from:
//
//	hostname    the pod name
//	echo <msg>  msg
//	clientip    the sender's ip:port as this server saw it (after any NAT)
//
// As agnhost does, a datagram is trimmed of surrounding white space and
// lower-cased before it is read, so echo answers in lower case; an unknown
// command gets no answer.

// DefaultUDPPort is agnhost netexec's default --udp-port.
const DefaultUDPPort = 8081

// NoUDPPort is agnhost netexec's --udp-port value for "no UDP server".
const NoUDPPort = -1

// maxDatagram bounds a UDP command (agnhost reads 2048 bytes).
const maxDatagram = 2048

// udpAnswer is the answer to one UDP command from client, and whether
// there is one.
func udpAnswer(datagram []byte, podName string, client net.Addr) (string, bool) {
	text := strings.ToLower(strings.TrimSpace(string(datagram)))
	switch {
	case text == "hostname":
		return podName, true
	case text == "clientip":
		return client.String(), true
	case strings.HasPrefix(text, "echo "):
		return strings.TrimPrefix(text, "echo "), true
	}
	return "", false
}

// serveUDP answers the datagrams conn receives until conn is closed.
func serveUDP(conn *net.UDPConn, podName string, logger *slog.Logger) error {
	buf := make([]byte, maxDatagram)
	for {
		n, client, err := conn.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		// A socket bound to all addresses is dual-stack: an IPv4 sender
		// comes as ::ffff:a.b.c.d, which clientip says as a.b.c.d.
		from := net.UDPAddrFromAddrPort(netip.AddrPortFrom(client.Addr().Unmap(), client.Port()))
		answer, ok := udpAnswer(buf[:n], podName, from)
		logger.Debug("udp request", "command", strings.TrimSpace(string(buf[:n])), "client", from.String(), "local", conn.LocalAddr().String(), "answered", ok)
		if !ok {
			continue
		}
		if _, err := conn.WriteToUDPAddrPort([]byte(answer), client); err != nil {
			logger.Warn("udp answer not sent", "client", from.String(), "err", err)
		}
	}
}
