package netnsdial

import (
	"context"
	"fmt"
	"net"

	"github.com/vishvananda/netns"
	"k8s.io/client-go/rest"

	"github.com/svclab/svclab/internal/nsthread"
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
		var conn net.Conn
		err = nsthread.Do(namespace, target, func() error {
			var d net.Dialer
			var err error
			conn, err = d.DialContext(ctx, network, address)
			return err
		})
		if err != nil && conn != nil {
			conn.Close() // dialled, but the thread could not be switched back
			conn = nil
		}
		return conn, err
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
