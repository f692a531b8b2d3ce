package ipvs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

func TestGracefulTerminationOfTCPRealServers(t *testing.T) {
	b, k, _ := newTestBackend(t, Options{})
	two := sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, eps("10.244.1.1:80", "10.244.1.2:80"))
	one := sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, eps("10.244.1.1:80"))
	vs := kernel.VirtualServer{Address: addr("10.96.0.20"), Protocol: kernel.TCP, Port: 80}
	leaving := kernel.RealServer{Address: addr("10.244.1.2"), Port: 80}

	mustSync(t, b, snapshot(two))
	k.ResetCalls()
	if !k.SetConnections(vs, leaving, 2, 1) {
		t.Fatal("real server 10.244.1.2:80 missing after the first sync")
	}

	mustSync(t, b, snapshot(one))
	checkCalls(t, k, "ipvsadm -e -t 10.96.0.20:80 -r 10.244.1.2:80 -m -w 0")

	// Still connected: nothing to do, and nothing done.
	mustSync(t, b, snapshot(one))
	checkCalls(t, k)

	// The connections expired: the next sync (the periodic one) deletes it.
	k.SetConnections(vs, leaving, 0, 0)
	mustSync(t, b, snapshot(one))
	checkCalls(t, k, "ipvsadm -d -t 10.96.0.20:80 -r 10.244.1.2:80")
}

func TestDrainingRealServerComesBack(t *testing.T) {
	b, k, _ := newTestBackend(t, Options{})
	two := sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, eps("10.244.1.1:80", "10.244.1.2:80"))
	one := sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, eps("10.244.1.1:80"))
	vs := kernel.VirtualServer{Address: addr("10.96.0.20"), Protocol: kernel.TCP, Port: 80}
	mustSync(t, b, snapshot(two))
	k.SetConnections(vs, kernel.RealServer{Address: addr("10.244.1.2"), Port: 80}, 1, 0)
	mustSync(t, b, snapshot(one))
	k.ResetCalls()

	mustSync(t, b, snapshot(two))
	checkCalls(t, k, "ipvsadm -e -t 10.96.0.20:80 -r 10.244.1.2:80 -m -w 1")
}

func TestUDPRealServersGoAtOnce(t *testing.T) {
	b, k, _ := newTestBackend(t, Options{})
	two := sp("default", "dns", "", corev1.ProtocolUDP, "10.96.0.10", 53, eps("10.244.1.1:53", "10.244.1.2:53"))
	one := sp("default", "dns", "", corev1.ProtocolUDP, "10.96.0.10", 53, eps("10.244.1.1:53"))
	vs := kernel.VirtualServer{Address: addr("10.96.0.10"), Protocol: kernel.UDP, Port: 53}
	mustSync(t, b, snapshot(two))
	k.SetConnections(vs, kernel.RealServer{Address: addr("10.244.1.2"), Port: 53}, 0, 5)
	k.ResetCalls()

	mustSync(t, b, snapshot(one))
	checkCalls(t, k, "ipvsadm -d -u 10.96.0.10:53 -r 10.244.1.2:53")
}

func TestFirstSyncRestoresWeightsLeftAtZero(t *testing.T) {
	// Upstream resets weights on its first sync (a restart during a
	// drain); here every sync compares weights.
	b, k, _ := newTestBackend(t, Options{})
	vs := kernel.VirtualServer{Address: addr("10.96.0.20"), Protocol: kernel.TCP, Port: 80, Scheduler: "rr"}
	rs := kernel.RealServer{Address: addr("10.244.1.1"), Port: 80, Weight: 0}
	if err := k.AddVirtualServer(vs); err != nil {
		t.Fatal(err)
	}
	if err := k.AddRealServer(vs, rs); err != nil {
		t.Fatal(err)
	}
	k.ResetCalls()
	res := mustSync(t, b, snapshot(sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, eps("10.244.1.1:80"))))
	if res.Plan.Count(OpUpdateRealServer) != 1 || res.Plan.Count(OpAddVirtualServer) != 0 {
		t.Errorf("plan:\n%s", res.Plan)
	}
}
