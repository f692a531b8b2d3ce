package ui

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
)

// TestLimitListenerHoldsTheNextConnection: with n connections open the
// next one waits for one to close (a second Close frees nothing more),
// and closing the listener ends a waiting Accept.
func TestLimitListenerHoldsTheNextConnection(t *testing.T) {
	inner, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := limitListener(inner, 2).(*limitedListener)
	defer l.Close()
	for range 4 {
		c, err := net.Dial("tcp4", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	a, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	accepted := make(chan error, 2)
	var third net.Conn // kept open; read after its error arrived
	accept := func() {
		c, err := l.Accept()
		if err == nil {
			third = c
		}
		accepted <- err
	}
	go accept()
	select {
	case err := <-accepted:
		t.Fatalf("a third connection was accepted (%v) while two were open", err)
	default:
	}
	a.Close()
	a.Close()
	if err := <-accepted; err != nil {
		t.Fatalf("Accept after a connection closed: %v", err)
	}
	defer third.Close()
	if n := len(l.slots); n != 2 {
		t.Errorf("%d slots taken with two connections open (one closed twice), want 2", n)
	}
	go accept() // waits: two are open
	l.Close()
	if err := <-accepted; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept waiting for a slot when the listener closed: %v, want net.ErrClosed", err)
	}
}

// TestHTTPServerBoundsConnections: a slow client cannot hold the server's
// connections: headers, bodies, answers and idle connections have a
// deadline, headers a size.
func TestHTTPServerBoundsConnections(t *testing.T) {
	srv := httpServer(context.Background(), http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= TrafficDeadline || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes != maxHeader {
		t.Errorf("server bounds: header %v, read %v, write %v (a traffic run takes up to %v), idle %v, header bytes %d",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, TrafficDeadline, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
}
