package traffic

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Over UDP a "connection" is a new socket (a source port no other exchange
// of the run used, sourceports.go, so a new conntrack entry, unless
// Options.SourcePort fixes the port) that sends one agnhost netexec UDP
// command and reads the one datagram that answers it. The socket is
// connected, so an ICMP port unreachable (kube-proxy's REJECT for a
// Service without endpoints) comes back as ECONNREFUSED on the read, and
// an ICMP host unreachable as EHOSTUNREACH.

// udpCommand is the UDP command that asks what the HTTP path asks:
// /hostname → hostname, /clientip → clientip, /echo?msg=M → echo M
// (agnhost netexec's three UDP commands).
func udpCommand(path string) (string, error) {
	u, err := url.Parse(path)
	if err != nil {
		return "", fmt.Errorf("traffic: path %q: %w", path, err)
	}
	switch u.Path {
	case "/hostname":
		return "hostname", nil
	case "/clientip":
		return "clientip", nil
	case "/echo":
		return "echo " + u.Query().Get("msg"), nil
	}
	return "", fmt.Errorf("traffic: path %q has no UDP command: want /hostname, /clientip or /echo?msg=", path)
}

// exchangeUDP sends the command of o.Path on conn and returns the answer,
// trimmed of surrounding white space. conn's deadline bounds the wait.
func exchangeUDP(conn net.Conn, o Options) (string, error) {
	command, err := udpCommand(o.Path)
	if err != nil {
		return "", err
	}
	if _, err := conn.Write([]byte(command)); err != nil {
		return "", fmt.Errorf("sending %q: %w", command, err)
	}
	buf := make([]byte, maxBody)
	n, err := conn.Read(buf)
	if err != nil {
		return "", fmt.Errorf("reading the answer to %q: %w", command, err)
	}
	answer := strings.TrimSpace(string(buf[:n]))
	if answer == "" {
		return "", errors.New("empty answer: no backend name")
	}
	return answer, nil
}
