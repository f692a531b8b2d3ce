package traffic

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// maxBody bounds how much of an answer is read: a pod name is short.
const maxBody = 64 << 10

// Connection is what happened to one connection.
type Connection struct {
	// Index is the connection's number in the run, from 0.
	Index int `json:"index"`
	// Start is from the run's start to this connection's dial: with
	// Duration, when in the run it ended (a conntrack check needs to know
	// how long before a dump of the table a connection closed).
	Start time.Duration `json:"startNanos"`
	// LocalAddress is the client's ip:port, to match conntrack entries;
	// empty when the connection was never established.
	LocalAddress string `json:"localAddress,omitempty"`
	// Backend is the answer to the GET or the UDP command (the pod name);
	// empty on failure.
	Backend string `json:"backend,omitempty"`
	// Failure is why there is no Backend; empty on success.
	Failure FailureKind `json:"failure,omitempty"`
	// Error is the failure's error text.
	Error string `json:"error,omitempty"`
	// Duration is from dial to close.
	Duration time.Duration `json:"durationNanos"`
	// Connect is from dial to the connection being established (over TCP
	// the handshake: SYN out, SYN-ACK back); 0 when the dial failed.
	Connect time.Duration `json:"connectNanos,omitempty"`
}

// connectOnce makes one connection: dial, one HTTP/1.1 GET, read exactly
// the answer, then close from the client side; over UDP, a new socket, one
// command datagram and its answer (exchangeUDP), from a source port no
// earlier exchange of the run used (ports, sourceports.go). ctx is the
// run's context, begun at runStart; the connection is bounded by timeout
// and by ctx, whichever ends first.
func connectOnce(ctx context.Context, dialer *net.Dialer, ports *sourcePorts, o Options, runStart time.Time, index int) Connection {
	start := time.Now()
	c := Connection{Index: index, Start: start.Sub(runStart)}
	fail := func(err error) Connection {
		c.Failure, c.Error, c.Duration = Classify(err), err.Error(), time.Since(start)
		if c.Failure == FailureTimeout && runOver(ctx) {
			c.Error = "overall deadline reached: " + c.Error
		}
		return c
	}

	connCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	conn, err := ports.dial(connCtx, dialer, o)
	if err != nil {
		return fail(err)
	}
	c.Connect = time.Since(start)
	// The client closes first: a plain Close (FIN, not an RST), after the
	// whole answer has been read.
	defer conn.Close()
	c.LocalAddress = conn.LocalAddr().String()

	// Bound reads and writes by the same deadline; if the run's context
	// ends first (overall deadline), cut the I/O short then.
	deadline, _ := connCtx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return fail(err)
	}
	stop := context.AfterFunc(connCtx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()

	ask := getOnce
	if o.Protocol == ProtocolUDP {
		ask = exchangeUDP
	}
	backend, err := ask(conn, o)
	if err != nil {
		return fail(err)
	}
	c.Backend, c.Duration = backend, time.Since(start)
	return c
}

// getOnce writes the request and reads the response, returning the body
// (trimmed of surrounding white space) when the status is 200. The request
// carries no "Connection: close", so it is the client that closes.
func getOnce(conn net.Conn, o Options) (string, error) {
	req := "GET " + o.Path + " HTTP/1.1\r\nHost: " + o.Target + "\r\nUser-Agent: svclab-traffic\r\nAccept: */*\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return "", fmt.Errorf("sending GET %s: %w", o.Path, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "", fmt.Errorf("reading the response header: %w", eofAsClosed(err))
	}
	defer resp.Body.Close()
	var body []byte
	if resp.ContentLength >= 0 {
		if resp.ContentLength > maxBody {
			return "", fmt.Errorf("response of %d bytes, more than %d", resp.ContentLength, maxBody)
		}
		body = make([]byte, resp.ContentLength)
		_, err = io.ReadFull(resp.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	}
	if err != nil {
		return "", fmt.Errorf("reading the response body: %w", eofAsClosed(err))
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP status %s", resp.Status)
	}
	name := strings.TrimSpace(string(body))
	if name == "" {
		return "", errors.New("empty answer: no backend name")
	}
	return name, nil
}

// runOver tells whether the run's context has ended, by its error or, as
// its timer may fire late, by its deadline.
func runOver(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(deadline)
}

func eofAsClosed(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("connection closed by the peer before a complete answer: %w", err)
	}
	return err
}
