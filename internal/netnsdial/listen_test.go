package netnsdial

import (
	"net"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nsthread"
)

// listenIn listens on 127.0.0.1:0 in the namespace h.
func listenIn(t *testing.T, h netns.NsHandle) net.Listener {
	t.Helper()
	var ln net.Listener
	err := nsthread.Do("the test's namespace", h, func() (err error) {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
