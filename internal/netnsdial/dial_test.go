package netnsdial

import (
	"context"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/roottest"
)

// TestIntegrationDialerReachesLoopbackOfANamespace serves on 127.0.0.1 in a
// fresh namespace and reaches it through the dialer from the host's
// namespace, where the same address and port are not served.
func TestIntegrationDialerReachesLoopbackOfANamespace(t *testing.T) {
	roottest.Require(t, "creates a network namespace")
	name := roottest.Netns(t, "svclab-test-netnsdial")

	// A listener inside the namespace (the socket is made on a thread
	// switched into it by the same mechanism, so listen there by hand).
	h, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ln := listenIn(t, h)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "inside\n")
			c.Close()
		}
	}()
	addr := ln.Addr().String()

	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Skipf("%s is also served in the host's namespace: cannot tell the namespaces apart", addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dialer(name)(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("dial %s in %s: %v", addr, name, err)
	}
	defer c.Close()
	b, _ := io.ReadAll(c)
	if string(b) != "inside\n" {
		t.Fatalf("read %q, want the namespace's listener", b)
	}
	if _, err := Dialer("svclab-test-no-such-namespace")(ctx, "tcp", addr); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Fatalf("dial in a missing namespace: %v, want a not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		next := u.Unwrap()
		if next == nil {
			return err
		}
		err = next
	}
}
