package kit

import (
	"net/netip"
	"testing"
	"time"
)

// TestTrafficParallelismInTheVM: the scenarios' connections are 4 at a time
// in svclab's VM, the client's default elsewhere.
func TestTrafficParallelismInTheVM(t *testing.T) {
	target := netip.MustParseAddrPort("10.96.0.10:80")
	t.Setenv("SVCLAB_VM", "1")
	if got := (TrafficOptions{Connections: 50}).Options(target).Parallelism; got != vmTrafficParallelism {
		t.Errorf("in the VM: parallelism %d, want %d", got, vmTrafficParallelism)
	}
	t.Setenv("SVCLAB_VM", "")
	if got := (TrafficOptions{Connections: 50}).Options(target).Parallelism; got != 0 {
		t.Errorf("on the host: parallelism %d, want 0 (the client's default)", got)
	}
}

// TestConnectionTimeoutInTheVM: a connection expected to succeed has 30 s
// in svclab's VM, TrafficTimeout elsewhere; a spec's own timeout stays.
func TestConnectionTimeoutInTheVM(t *testing.T) {
	target := netip.MustParseAddrPort("10.96.0.10:80")
	t.Setenv("SVCLAB_VM", "1")
	if got := (TrafficOptions{Connections: 50}).Options(target).Timeout; got != vmTrafficTimeout {
		t.Errorf("in the VM: timeout %s, want %s", got, vmTrafficTimeout)
	}
	if got := (TrafficOptions{Connections: 5, Timeout: time.Second}).Options(target).Timeout; got != time.Second {
		t.Errorf("in the VM, a spec's own timeout: %s, want 1s", got)
	}
	t.Setenv("SVCLAB_VM", "")
	if got := (TrafficOptions{Connections: 50}).Options(target).Timeout; got != TrafficTimeout {
		t.Errorf("on the host: timeout %s, want %s", got, TrafficTimeout)
	}
}
