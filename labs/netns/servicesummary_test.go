package netns

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/netns/workload"
)

// TestDescribeService: what apply prints for each Service of
// clusters/workloads/service-types.yaml on clusters/service-types.yaml, and
// for an external IP outside the lab's routed blocks.
func TestDescribeService(t *testing.T) {
	topo, err := topology.Load(filepath.Join("..", "..", "clusters", "service-types.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l := &Lab{Topology: topo}
	data, err := os.ReadFile(filepath.Join("..", "..", "clusters", "workloads", "service-types.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, []byte("---\napiVersion: v1\nkind: Service\nmetadata: {name: far}\nspec:\n  externalIPs: [198.51.100.1]\n  ports: [{port: 80}]\n")...)
	m, err := workload.Decode(data, "st.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.Cluster().Apply(&labstore.State{}, m, "st.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"lb":     "cluster IP 10.254.0.11, node ports 80:30000/TCP, load balancer IP 192.168.100.10, health check node port 30001",
		"ext":    "cluster IP 10.254.0.12, external IPs 203.0.113.7",
		"cname":  "ExternalName www.example.com (no cluster IP, no proxy rules)",
		"sticky": "cluster IP 10.254.0.13",
		"far":    "cluster IP 10.254.0.14, external IPs 198.51.100.1 (198.51.100.1: outside the lab file's spec.externalIPs, so the router does not send it to the cluster; only the nodes reach it)",
	} {
		if got := l.describeService(st.Service("default", name)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
