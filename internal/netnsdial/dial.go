package netnsdial

import (
	"context"
	"fmt"
	"net"
	"runtime"

	"github.com/vishvananda/netns"
	"k8s.io/client-go/rest"
)

// DialFunc is the signature of net.Dialer.DialContext and rest.Config.Dial.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Dialer returns a DialFunc whose sockets are created in the network
// namespace named namespace (as in /run/netns). A socket belongs to the
// namespace of the thread that creates it, and keeps it: the dial runs on
// a locked OS thread switched into the namespace and back, and the
// connection is then used from any goroutine.
func Dialer(namespace string) DialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		target, err := netns.GetFromName(namespace)
		if err != nil {
			return nil, fmt.Errorf("network namespace %s: %w", namespace, err)
		}
		defer target.Close()
		type result struct {
			conn net.Conn
			err  error
		}
		done := make(chan result, 1)
		go func() {
			// This goroutine's thread is switched into the namespace and
			// never given back to the scheduler if switching back fails
			// (the goroutine exits while still locked: the runtime then
			// kills the thread).
			runtime.LockOSThread()
			origin, err := netns.Get()
			if err != nil {
				done <- result{err: err}
				return
			}
			defer origin.Close()
			if err := netns.Set(target); err != nil {
				done <- result{err: fmt.Errorf("entering network namespace %s: %w", namespace, err)}
				return
			}
			var d net.Dialer
			conn, err := d.DialContext(ctx, network, address)
			if err := netns.Set(origin); err != nil {
				if conn != nil {
					conn.Close()
				}
				done <- result{err: fmt.Errorf("leaving network namespace %s: %w", namespace, err)}
				return
			}
			runtime.UnlockOSThread()
			done <- result{conn: conn, err: err}
		}()
		r := <-done
		return r.conn, r.err
	}
}

// Config returns a copy of cfg whose connections are dialled from the
// named network namespace ("" returns cfg unchanged).
func Config(cfg *rest.Config, namespace string) *rest.Config {
	if namespace == "" {
		return cfg
	}
	c := rest.CopyConfig(cfg)
	c.Dial = Dialer(namespace)
	return c
}
