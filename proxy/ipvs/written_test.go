package ipvs

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel/kerneltest"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// scaleSnapshot is n ClusterIP services of e endpoints each (the first
// one on this node), every tenth also a NodePort.
func scaleSnapshot(n, e int) *model.Snapshot {
	sps := make([]*model.ServicePort, 0, n)
	for i := range n {
		ip := netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)})
		var list []string
		for j := range e {
			ep := fmt.Sprintf("10.%d.%d.%d:8080", 100+j, i>>8, i&0xff)
			if j == 0 {
				ep = "local:" + ep
			}
			list = append(list, ep)
		}
		opts := []func(*model.ServicePort){eps(list...)}
		if i%10 == 0 {
			opts = append(opts, nodePort(int32(30000+i/10)))
		}
		sps = append(sps, sp("scale", fmt.Sprintf("svc-%05d", i), "http", corev1.ProtocolTCP, ip.String(), 80, opts...))
	}
	return snapshot(sps...)
}

// withEndpoint returns a copy of snap in which endpoint j of service port
// i has the address ip (snap is left as it was).
func withEndpoint(snap *model.Snapshot, i, j int, ip string) *model.Snapshot {
	out := *snap
	out.ServicePorts = slices.Clone(snap.ServicePorts)
	moved := *snap.ServicePorts[i]
	moved.Endpoints = slices.Clone(moved.Endpoints)
	moved.Endpoints[j].IP = addr(ip)
	out.ServicePorts[i] = &moved
	return &out
}

// checkCounts compares the fake's counts since the last check with want.
func checkCounts(t *testing.T, k *kerneltest.Fake, res SyncResult, want kernel.Calls) {
	t.Helper()
	got := k.TakeCounts()
	if !maps.Equal(got, want) {
		t.Errorf("kernel calls:\n  got  %s\n  want %s", got, want)
	}
	if !maps.Equal(res.Kernel, got) {
		t.Errorf("the sync counted %s, the kernel saw %s", res.Kernel, got)
	}
}

// fullRead is what a sync that reads the whole fake kernel asks it, with
// vss virtual servers there, on top of the node addresses every sync reads.
func fullRead(vss int) kernel.Calls {
	c := kernel.Calls{"NodeAddresses": 1, "Addresses": 1, "Entries": len(Sets), "VirtualServers": 1}
	if vss > 0 {
		c["RealServers"] = vss
	}
	return c
}

// readsOf keeps the reads of c.
func readsOf(c kernel.Calls) kernel.Calls {
	maps.DeleteFunc(c, func(call string, _ int) bool { return !kernel.IsRead(call) })
	return c
}

// checkKernelMatches reads the fake kernel in full and checks that it
// holds what d asks for. Its own reads are not counted.
func checkKernelMatches(t *testing.T, k *kerneltest.Fake, d *Desired) {
	t.Helper()
	defer k.TakeCounts()
	a, err := ReadActual(k)
	if err != nil {
		t.Fatal(err)
	}
	if rest := Diff(d, a, DiffOptions{AppliedIPTables: d.IPTables}); len(rest) != 0 {
		t.Fatalf("the kernel differs from the desired state:\n%s", rest)
	}
}

// countVirtualServers is how many virtual servers the fake holds. Its
// own read is not counted.
func countVirtualServers(t *testing.T, k *kerneltest.Fake) int {
	t.Helper()
	defer k.TakeCounts()
	vss, err := k.VirtualServers()
	if err != nil {
		t.Fatal(err)
	}
	return len(vss)
}

func TestSyncOfNothingChangedOnlyReadsTheNodeAddresses(t *testing.T) {
	b, k, _ := newTestBackend(t, Options{})
	snap := scaleSnapshot(1000, 2)
	mustSync(t, b, snap)
	if got := readsOf(k.TakeCounts()); !maps.Equal(got, fullRead(0)) {
		t.Errorf("the first sync read %s, want %s", got, fullRead(0))
	}

	// Upstream reads the node's addresses every sync too
	// (GetAllLocalAddressesExcept), and with them kube-ipvs0's addresses,
	// every virtual server and its destinations, and every ipset.
	res := mustSync(t, b, snap)
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1})
	if res.Full || res.Ops != 0 || res.Bytes != 0 {
		t.Errorf("nothing changed, yet full=%v ops=%d bytes=%d", res.Full, res.Ops, res.Bytes)
	}
}

func TestSyncOfOneEndpointChangedAmong1000ServicesSendsOnlyTheChange(t *testing.T) {
	b, k, _ := newTestBackend(t, Options{})
	snap := scaleSnapshot(1000, 2)
	mustSync(t, b, snap)
	k.TakeCounts()
	k.ResetCalls()

	moved := withEndpoint(snap, 501, 1, "10.250.0.1")
	res := mustSync(t, b, moved)
	// The TCP destination going away is deleted at once or drained by its
	// connections: its virtual server's destinations are read (upstream's
	// GracefulDeleteRS reads them too).
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1, "RealServers": 1, "AddRealServer": 1, "DeleteRealServer": 1})
	checkCalls(t, k,
		"ipvsadm -a -t 10.96.1.245:80 -r 10.250.0.1:8080 -m -w 1",
		"ipvsadm -d -t 10.96.1.245:80 -r 10.101.1.245:8080")
	checkKernelMatches(t, k, mustDesired(t, b, k, moved))

	// And back, still in proportion to the change.
	res = mustSync(t, b, snap)
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1, "RealServers": 1, "AddRealServer": 1, "DeleteRealServer": 1})
	checkKernelMatches(t, k, mustDesired(t, b, k, snap))
}

func TestSyncOfOneNewServiceAmong1000SendsOnlyIt(t *testing.T) {
	b, k, _ := newTestBackend(t, Options{})
	snap := scaleSnapshot(1000, 2)
	mustSync(t, b, snap)
	k.TakeCounts()

	grown := *snap
	grown.ServicePorts = append(slices.Clone(snap.ServicePorts),
		sp("scale", "new", "http", corev1.ProtocolTCP, "10.97.0.1", 80, eps("10.244.9.1:8080", "10.244.9.2:8080")))
	grown.SortServicePorts()
	res := mustSync(t, b, &grown)
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1, "AddVirtualServer": 1, "AddRealServer": 2, "AddAddress": 1, "AddEntry": 2})
	checkKernelMatches(t, k, mustDesired(t, b, k, &grown))
}

func TestSyncAfterAnErrorReadsTheWholeKernel(t *testing.T) {
	b, k, _ := newTestBackend(t, Options{})
	snap := scaleSnapshot(100, 2)
	mustSync(t, b, snap)
	k.TakeCounts()

	k.Fail = func(call string) error {
		if strings.HasPrefix(call, "ipvsadm -a ") {
			return errors.New("injected")
		}
		return nil
	}
	moved := withEndpoint(snap, 7, 1, "10.250.0.1")
	if _, err := b.Sync(moved); err == nil {
		t.Fatal("the sync succeeded despite the injected failure")
	}
	k.Fail = nil
	k.TakeCounts()

	vss := countVirtualServers(t, k)
	res := mustSync(t, b, moved)
	if !res.Full {
		t.Error("the sync after an error is not a full one")
	}
	want := fullRead(vss)
	want["AddRealServer"] = 1
	checkCounts(t, k, res, want)
	checkKernelMatches(t, k, mustDesired(t, b, k, moved))

	res = mustSync(t, b, moved)
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1})
}

func TestFullSyncReadsTheWholeKernelAndRestoresWhatSomeoneRemoved(t *testing.T) {
	b, k, ipt := newTestBackend(t, Options{})
	snap := scaleSnapshot(100, 2)
	mustSync(t, b, snap)
	k.TakeCounts()
	vs := kernel.VirtualServer{Address: addr("10.96.0.7"), Protocol: kernel.TCP, Port: 80, Scheduler: "rr"}
	gone := kernel.RealServer{Address: addr("10.101.0.7"), Port: 8080, Weight: 1}
	if err := k.DeleteRealServer(vs, gone); err != nil {
		t.Fatal(err)
	}
	k.TakeCounts()
	k.ResetCalls()

	// A partial sync trusts what it wrote: the removal goes unseen.
	res := mustSync(t, b, snap)
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1})

	// The periodic full sync reads everything and puts it back.
	b.ForceFullSync()
	restores, vss := len(ipt.restores), countVirtualServers(t, k)
	res = mustSync(t, b, snap)
	if !res.Full {
		t.Error("the sync after ForceFullSync is not a full one")
	}
	want := fullRead(vss)
	want["AddRealServer"] = 1
	checkCounts(t, k, res, want)
	checkCalls(t, k, "ipvsadm -a -t 10.96.0.7:80 -r 10.101.0.7:8080 -m -w 1")
	if len(ipt.restores) != restores+1 {
		t.Errorf("the full sync did not rewrite the iptables rules")
	}
}

func TestDrainingPollsOnlyTheVirtualServersItDrains(t *testing.T) {
	b, k, _ := newTestBackend(t, Options{})
	snap := scaleSnapshot(1000, 2)
	mustSync(t, b, snap)
	vs := kernel.VirtualServer{Address: addr("10.96.0.7"), Protocol: kernel.TCP, Port: 80}
	leaving := kernel.RealServer{Address: addr("10.101.0.7"), Port: 8080}
	if !k.SetConnections(vs, leaving, 3, 1) {
		t.Fatal("real server 10.101.0.7:8080 missing")
	}
	k.TakeCounts()
	k.ResetCalls()

	moved := withEndpoint(snap, 7, 1, "10.250.0.1")
	res := mustSync(t, b, moved)
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1, "RealServers": 1, "AddRealServer": 1, "UpdateRealServer": 1})
	checkCalls(t, k,
		"ipvsadm -a -t 10.96.0.7:80 -r 10.250.0.1:8080 -m -w 1",
		"ipvsadm -e -t 10.96.0.7:80 -r 10.101.0.7:8080 -m -w 0")

	// While it drains, each sync reads its virtual server's destinations
	// (the connection counts), and no other's.
	res = mustSync(t, b, moved)
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1, "RealServers": 1})
	checkCalls(t, k)

	// Drained: deleted, and polled no more.
	k.SetConnections(vs, leaving, 0, 0)
	res = mustSync(t, b, moved)
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1, "RealServers": 1, "DeleteRealServer": 1})
	checkCalls(t, k, "ipvsadm -d -t 10.96.0.7:80 -r 10.101.0.7:8080")
	res = mustSync(t, b, moved)
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1})
}

func TestDrainingAfterAFullSyncIsPolledFromTheKernelsRecord(t *testing.T) {
	// A full sync finds a destination at weight 0 that no Service wants
	// (left by a restart during a drain): the following partial syncs
	// keep polling it until it is empty.
	b, k, _ := newTestBackend(t, Options{})
	snap := scaleSnapshot(10, 1)
	mustSync(t, b, snap)
	vs := kernel.VirtualServer{Address: addr("10.96.0.3"), Protocol: kernel.TCP, Port: 80, Scheduler: "rr"}
	stale := kernel.RealServer{Address: addr("10.199.0.3"), Port: 8080, Weight: 0}
	if err := k.AddRealServer(vs, stale); err != nil {
		t.Fatal(err)
	}
	k.SetConnections(vs, stale, 1, 0)
	b.ForceFullSync()
	mustSync(t, b, snap)
	k.TakeCounts()
	k.ResetCalls()

	res := mustSync(t, b, snap)
	checkCounts(t, k, res, kernel.Calls{"NodeAddresses": 1, "RealServers": 1})
	k.SetConnections(vs, stale, 0, 0)
	mustSync(t, b, snap)
	checkCalls(t, k, "ipvsadm -d -t 10.96.0.3:80 -r 10.199.0.3:8080")
}

// FuzzPartialSyncsMatchTheKernel drives one Backend through generated
// states (first, second, first again) with partial syncs and checks after
// each that the kernel, read in full, holds exactly the desired state:
// what the Backend records of its writes never drifts from the kernel.
func FuzzPartialSyncsMatchTheKernel(f *testing.F) {
	modeltest.AddSeeds(f)
	f.Fuzz(func(t *testing.T, o byte, first, second []byte) {
		b, k, _ := newTestBackend(t, Options{Scheduler: []string{"rr", "mh", "wrr", "sh"}[o%4]})
		for i, data := range [][]byte{first, second, first, second} {
			snap := modeltest.Snapshot(data)
			res, err := b.Sync(snap)
			if err != nil {
				t.Fatalf("sync %d: %v", i, err)
			}
			if res.Full != (i == 0) {
				t.Fatalf("sync %d: full=%v", i, res.Full)
			}
			checkKernelMatches(t, k, mustDesired(t, b, k, snap))
		}
	})
}

// mustDesired is what b would write for snap (its read of the node's
// addresses is not counted by the kernel k).
func mustDesired(t *testing.T, b *Backend, k *kerneltest.Fake, snap *model.Snapshot) *Desired {
	t.Helper()
	defer k.TakeCounts()
	d, err := b.Desired(snap)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
