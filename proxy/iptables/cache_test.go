package iptables

import (
	"bytes"
	"fmt"
	"net/netip"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/model"
)

// TestParallelRenderMatchesSequential renders enough service ports to use
// several goroutines and compares each fragment with a sequential
// rendering. Run with -race to check the workers share nothing mutable.
func TestParallelRenderMatchesSequential(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	var sps []*model.ServicePort
	for i := range 4 * minServicePortsPerWorker {
		sp := &model.ServicePort{
			Name:      model.ServicePortName{Namespace: "ns", Name: fmt.Sprintf("svc%04d", i), Port: "http", Protocol: corev1.ProtocolTCP},
			ClusterIP: netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}),
			Port:      80, Protocol: corev1.ProtocolTCP, NodePort: int32(30000 + i),
			SessionAffinity: corev1.ServiceAffinityNone,
		}
		for j := range i%7 + 1 { // different endpoint counts exercise the probability cache
			sp.Endpoints = append(sp.Endpoints, model.Endpoint{IP: netip.AddrFrom4([4]byte{10, 244, byte(i >> 8), byte(i*7 + j)}), Port: 8080, Ready: true, Serving: true})
		}
		sps = append(sps, sp)
	}
	parallel, err := NewRenderer(Options{ClusterCIDR: "10.244.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	got := parallel.refreshCache(sps, false)
	if len(parallel.writers) < 2 {
		t.Fatalf("expected several writers, have %d", len(parallel.writers))
	}
	sequential, _ := NewRenderer(Options{ClusterCIDR: "10.244.0.0/16"})
	for i, sp := range sps {
		want := sequential.writers[0].render(sp, false)
		if !bytes.Equal(got[i].buf, want.buf) || got[i].sp != sp {
			t.Fatalf("service port %d rendered differently in parallel:\n%s\nvs\n%s", i, got[i].buf, want.buf)
		}
	}
}
