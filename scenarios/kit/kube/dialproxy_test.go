package kube

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
)

// TestConnectProxyTunnelsOnlyWithThePasswordAndOnlyToItsTarget: another
// user of the machine cannot use the exec proxy: no password is 407, a
// wrong password 407, another address 403, and none of them is dialled.
func TestConnectProxyTunnelsOnlyWithThePasswordAndOnlyToItsTarget(t *testing.T) {
	d := &recordingDialer{}
	p, err := startConnectProxy("10.1.2.3:6443", d.dial)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	password, _ := p.url.User.Password()
	for _, c := range []struct {
		target, auth string
		want         int
	}{
		{"10.1.2.3:6443", "", http.StatusProxyAuthRequired},
		{"10.1.2.3:6443", basicAuth("svclab", "guess"), http.StatusProxyAuthRequired},
		{"10.9.9.9:22", basicAuth("svclab", password), http.StatusForbidden},
	} {
		if got := sendConnect(t, p.url.Host, c.target, c.auth); got != c.want {
			t.Errorf("CONNECT %s with %q: %d, want %d", c.target, c.auth, got, c.want)
		}
	}
	if dialed := d.addresses(); len(dialed) != 0 {
		t.Errorf("dialled %v for refused requests", dialed)
	}
}

func basicAuth(user, password string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}

// sendConnect sends one CONNECT to the proxy at addr and returns the status.
func sendConnect(t *testing.T, addr, target, auth string) int {
	t.Helper()
	conn, err := (&net.Dialer{}).DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", target, target)
	if auth != "" {
		fmt.Fprintf(conn, "Proxy-Authorization: %s\r\n", auth)
	}
	fmt.Fprint(conn, "\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}
