package kerneltest

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

var (
	vs = kernel.VirtualServer{Address: netip.MustParseAddr("10.96.0.10"), Protocol: kernel.UDP, Port: 53, Scheduler: "rr"}
	rs = kernel.RealServer{Address: netip.MustParseAddr("10.244.1.5"), Port: 53, Weight: 1}
)

func TestFakeRefusesWhatTheKernelRefuses(t *testing.T) {
	f := New("192.168.0.10")
	if err := f.AddRealServer(vs, rs); !errors.Is(err, unix.ESRCH) {
		t.Errorf("real server without its virtual server: %v, want ESRCH", err)
	}
	if err := f.AddVirtualServer(vs); err != nil {
		t.Fatal(err)
	}
	if err := f.AddVirtualServer(vs); !errors.Is(err, unix.EEXIST) {
		t.Errorf("second service with the same address: %v, want EEXIST", err)
	}
	bad := vs
	bad.Port, bad.Scheduler = 54, "nope"
	if err := f.AddVirtualServer(bad); !errors.Is(err, unix.ENOENT) {
		t.Errorf("unknown scheduler: %v, want ENOENT", err)
	}
	if err := f.AddRealServer(vs, rs); err != nil {
		t.Fatal(err)
	}
	if err := f.AddRealServer(vs, rs); !errors.Is(err, unix.EEXIST) {
		t.Errorf("duplicate real server: %v, want EEXIST", err)
	}
	if err := f.DeleteRealServer(vs, kernel.RealServer{Address: netip.MustParseAddr("10.244.9.9"), Port: 53}); !errors.Is(err, unix.ENOENT) {
		t.Errorf("deleting a missing real server: %v, want ENOENT", err)
	}
	if err := f.AddAddress("kube-ipvs0", vs.Address); !errors.Is(err, unix.ENODEV) {
		t.Errorf("address on a missing device: %v, want ENODEV", err)
	}
	if err := f.AddEntry("KUBE-CLUSTER-IP", kernel.HashIPPort, "10.96.0.10,udp:53"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("entry in a missing set: %v", err)
	}
	if err := f.CreateSet("S", kernel.HashIPPort, kernel.Inet); err != nil {
		t.Fatal(err)
	}
	if err := f.CreateSet("S", kernel.HashIP, kernel.Inet); err == nil {
		t.Error("recreating a set with another type succeeded")
	}
	if err := f.AddEntry("S", kernel.HashIPPort, "10.96.0.10"); err == nil {
		t.Error("malformed entry accepted")
	}
	if err := f.AddEntry("S", kernel.HashIPPort, "fd00:10:96::a,udp:53"); err == nil {
		t.Error("an IPv6 member accepted in an inet set")
	}
	if err := f.CreateSet("S6", kernel.HashIPPort, kernel.Inet6); err != nil {
		t.Fatal(err)
	}
	if err := f.AddEntry("S6", kernel.HashIPPort, "10.96.0.10,udp:53"); err == nil {
		t.Error("an IPv4 member accepted in an inet6 set")
	}
	if err := f.AddEntry("S6", kernel.HashIPPort, "fd00:10:96::a,udp:53"); err != nil {
		t.Errorf("an IPv6 member of an inet6 set: %v", err)
	}
	vs6 := kernel.VirtualServer{Address: netip.MustParseAddr("fd00:10:96::a"), Protocol: kernel.UDP, Port: 53, Scheduler: "rr"}
	if err := f.AddVirtualServer(vs6); err != nil {
		t.Fatalf("an IPv6 virtual server: %v", err)
	}
	if err := f.AddRealServer(vs6, kernel.RealServer{Address: netip.MustParseAddr("10.244.1.5"), Port: 53, Weight: 1}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("an IPv4 real server of an IPv6 virtual server: %v, want EINVAL", err)
	}
	f.InUse["S"] = true
	if err := f.DestroySet("S"); err == nil {
		t.Error("destroyed a set in use")
	}
	f.NoIPVS = true
	if _, err := f.VirtualServers(); !errors.Is(err, kernel.ErrNoIPVS) {
		t.Errorf("NoIPVS: %v", err)
	}
}

func TestFakeDeletingAServiceTakesItsRealServers(t *testing.T) {
	f := New()
	_ = f.AddVirtualServer(vs)
	_ = f.AddRealServer(vs, rs)
	if err := f.DeleteVirtualServer(vs); err != nil {
		t.Fatal(err)
	}
	_ = f.AddVirtualServer(vs)
	if rss, _ := f.RealServers(vs); len(rss) != 0 {
		t.Errorf("real servers survived their service: %v", rss)
	}
	want := []string{"ipvsadm -A -u 10.96.0.10:53 -s rr", "ipvsadm -a -u 10.96.0.10:53 -r 10.244.1.5:53 -m -w 1", "ipvsadm -D -u 10.96.0.10:53", "ipvsadm -A -u 10.96.0.10:53 -s rr"}
	if got := f.TakeCalls(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", got, want)
	}
}

func TestFakeNodeAddressesSkipLoopbackAndTheExcludedDevice(t *testing.T) {
	f := New("192.168.0.10")
	_ = f.EnsureDummy("kube-ipvs0")
	_ = f.AddAddress("kube-ipvs0", netip.MustParseAddr("10.96.0.10"))
	got, _ := f.NodeAddresses("kube-ipvs0")
	if len(got) != 1 || got[0] != netip.MustParseAddr("192.168.0.10") {
		t.Errorf("NodeAddresses = %v", got)
	}
}
