package netnsdial

import (
	"net"
	"runtime"
	"testing"

	"github.com/vishvananda/netns"
)

// listenIn listens on 127.0.0.1:0 in the namespace h.
func listenIn(t *testing.T, h netns.NsHandle) net.Listener {
	t.Helper()
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer origin.Close()
		if err := netns.Set(h); err != nil {
			done <- result{err: err}
			return
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if netns.Set(origin) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{ln, err}
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.ln
}
