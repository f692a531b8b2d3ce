package network

import (
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/topology"
)

// Timed: Build (and the pods' AttachPod); not timed: Destroy.
//
//	sudo go test ./labs/netns/network -run '^$' -bench BenchmarkBuild -benchtime 20x

// BenchmarkBuildSingleNode builds clusters/single-node.yaml: router, one
// node, one client (38 steps, one iptables-restore).
func BenchmarkBuildSingleNode(b *testing.B) {
	roottest.Require(b, "creates network namespaces")
	benchBuild(b, "../../../clusters/single-node.yaml", nil)
}

// BenchmarkBuildNodeport3Pods builds clusters/nodeport.yaml (canal: two
// nodes, one client) and attaches three pods.
func BenchmarkBuildNodeport3Pods(b *testing.B) {
	roottest.Require(b, "creates network namespaces")
	benchBuild(b, "../../../clusters/nodeport.yaml", []struct {
		node string
		pod  PodNet
	}{
		{"hosta", PodNet{Name: "web-a", IP: netip.MustParseAddr("10.100.40.2")}},
		{"hosta", PodNet{Name: "web-a2", IP: netip.MustParseAddr("10.100.40.3")}},
		{"hostb", PodNet{Name: "web-b", IP: netip.MustParseAddr("10.100.81.2")}},
	})
}

// settle is how long each iteration waits, untimed, after Destroy: the
// kernel tears deleted namespaces down in the background, and that work
// (under the RTNL lock) otherwise slows the next Build down. Set
// SVCLAB_BENCH_SETTLE=0s to measure back-to-back rebuilds instead.
var settle = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("SVCLAB_BENCH_SETTLE")); err == nil {
		return d
	}
	return 200 * time.Millisecond
}()

func benchBuild(b *testing.B, path string, pods []struct {
	node string
	pod  PodNet
}) {
	lab, err := topology.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		lab.Metadata.Name = uniqueLabName(b)
		b.StartTimer()
		if _, err := Build(lab); err != nil {
			b.Fatal(err)
		}
		for _, p := range pods {
			if _, err := AttachPod(lab, p.node, p.pod); err != nil {
				Destroy(lab.Name())
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if err := Destroy(lab.Name()); err != nil {
			b.Fatal(err)
		}
		time.Sleep(settle)
		b.StartTimer()
	}
}
