package kit

import (
	"net/netip"
	"testing"
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
