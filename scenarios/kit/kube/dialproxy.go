package kube

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"sync"
	"time"
)

// connectProxy is an HTTP CONNECT proxy on this process's loopback that
// dials through a dial function: how a WebSocket exec reaches a cluster
// through a rest.Config's dialer (a cluster in another network
// namespace, internal/netnsdial). client-go's WebSocket round tripper
// ignores rest.Config.Dial but honours rest.Config.Proxy, so the exec's
// config points its proxy here. The proxy tunnels to one address only,
// the API server's, and only for a request that carries its random
// password: another user of the machine cannot use it to reach the
// dialer's network.
type connectProxy struct {
	ln     net.Listener
	url    *neturl.URL
	target string
	auth   string
	dial   func(ctx context.Context, network, address string) (net.Conn, error)
	ctx    context.Context
	cancel context.CancelFunc
	conns  sync.WaitGroup
}

// startConnectProxy serves on 127.0.0.1 a proxy that tunnels only to
// target (host:port), dialled with dial.
func startConnectProxy(target string, dial func(ctx context.Context, network, address string) (net.Conn, error)) (*connectProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("exec proxy: %w", err)
	}
	secret := make([]byte, 16)
	rand.Read(secret)
	password := hex.EncodeToString(secret)
	ctx, cancel := context.WithCancel(context.Background())
	p := &connectProxy{
		ln:     ln,
		url:    &neturl.URL{Scheme: "http", User: neturl.UserPassword("svclab", password), Host: ln.Addr().String()},
		target: target,
		auth:   "Basic " + base64.StdEncoding.EncodeToString([]byte("svclab:"+password)),
		dial:   dial,
		ctx:    ctx,
		cancel: cancel,
	}
	p.conns.Add(1)
	go p.serve()
	return p, nil
}

// Proxy is the rest.Config.Proxy function that sends requests through p.
func (p *connectProxy) Proxy(*http.Request) (*neturl.URL, error) { return p.url, nil }

// Close stops accepting, ends the tunnels, and waits for them.
func (p *connectProxy) Close() error {
	p.cancel()
	err := p.ln.Close()
	p.conns.Wait()
	return err
}

func (p *connectProxy) serve() {
	defer p.conns.Done()
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.conns.Add(1)
		go func() {
			defer p.conns.Done()
			p.tunnel(conn)
		}()
	}
}

// tunnel answers one CONNECT: 407 without the password, 403 for another
// address, 502 when the dial fails, else 200 and the bytes both ways.
func (p *connectProxy) tunnel(client net.Conn) {
	defer client.Close()
	client.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(client)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	client.SetReadDeadline(time.Time{})
	answer := func(status int) {
		fmt.Fprintf(client, "HTTP/1.1 %d %s\r\nContent-Length: 0\r\n\r\n", status, http.StatusText(status))
	}
	switch {
	case subtle.ConstantTimeCompare([]byte(req.Header.Get("Proxy-Authorization")), []byte(p.auth)) != 1:
		answer(http.StatusProxyAuthRequired)
		return
	case req.Method != http.MethodConnect || req.Host != p.target:
		answer(http.StatusForbidden)
		return
	}
	upstream, err := p.dial(p.ctx, "tcp", p.target)
	if err != nil {
		answer(http.StatusBadGateway)
		return
	}
	defer upstream.Close()
	answer(http.StatusOK)
	stop := context.AfterFunc(p.ctx, func() { client.Close(); upstream.Close() })
	defer stop()
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(upstream, br) // what the client sent after the CONNECT is buffered in br
		closeWrite(upstream)
		done <- struct{}{}
	}()
	go func() {
		io.Copy(client, upstream)
		closeWrite(client)
		done <- struct{}{}
	}()
	<-done
	<-done
}

// closeWrite half-closes a connection that can, so the other side sees
// the end of what this side sends.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}
