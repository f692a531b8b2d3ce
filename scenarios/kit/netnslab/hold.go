package netnslab

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/svclab/svclab/labs/netns/network"
)

// HeldConnection is a TCP connection opened from a lab host and kept open,
// to watch what a proxy does to established connections (IPVS graceful
// termination). The socket belongs to the host's namespace: it is made on
// a thread inside it, and keeps that namespace whichever thread uses it.
type HeldConnection struct {
	conn *net.TCPConn
	// Backend is the pod that answered GET /hostname on it.
	Backend string
}

// Hold connects from host to target and asks /hostname once.
func (l *Lab) Hold(host, target string) (*HeldConnection, error) {
	ns, err := l.Namespace(host)
	if err != nil {
		return nil, err
	}
	var conn net.Conn
	err = network.Do(ns, func() error {
		var derr error
		conn, derr = net.DialTimeout("tcp4", target, 2*time.Second)
		return derr
	})
	if err != nil {
		return nil, fmt.Errorf("hold a connection from %s to %s: %w", host, target, err)
	}
	h := &HeldConnection{conn: conn.(*net.TCPConn)}
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "GET /hostname HTTP/1.1\r\nHost: %s\r\n\r\n", target)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	conn.SetDeadline(time.Time{})
	h.Backend = strings.TrimSpace(string(body))
	return h, nil
}

// Reset closes the connection with a RST (SO_LINGER 0), as a client that
// gives up does.
func (h *HeldConnection) Reset() error {
	h.conn.SetLinger(0)
	return h.conn.Close()
}
