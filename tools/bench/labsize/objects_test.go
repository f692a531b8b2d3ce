package labsize

import (
	"testing"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/netns/workload"
)

// The generated lab file is a valid lab of n nodes at the largest size
// too, and the workload puts pods-per-node pods on every node behind one
// Service, as the lab's scheduler spreads the Deployment.
func TestWorkloadSpreadsOverEveryNode(t *testing.T) {
	for _, n := range []int{1, 10, MaxNodes} {
		lab, err := topology.Parse([]byte(labYAML("lsbench-0001", n)), "generated")
		if err != nil {
			t.Fatalf("%d nodes: %v", n, err)
		}
		if len(lab.Spec.Nodes) != n {
			t.Fatalf("%d nodes: the lab file has %d", n, len(lab.Spec.Nodes))
		}
		const perNode = 3
		st := applyYAML(t, cluster(lab), &labstore.State{}, workloadYAML(n*perNode))
		perNodeCount := map[string]int{}
		for _, p := range st.Pods {
			perNodeCount[p.Spec.NodeName]++
		}
		for _, node := range lab.Spec.Nodes {
			if perNodeCount[node.Name] != perNode {
				t.Errorf("%d nodes: node %s runs %d pods, want %d", n, node.Name, perNodeCount[node.Name], perNode)
			}
		}
		if len(st.Services) != 1 || st.Services[0].Spec.Ports[0].Port != servicePort {
			t.Fatalf("%d nodes: want the one Service on port %d, got %v", n, servicePort, st.Services)
		}
	}
}

// The measured change moves the one Service's port and touches no pod.
func TestServiceChangeMovesThePortOnly(t *testing.T) {
	lab, err := topology.Parse([]byte(labYAML("lsbench-0001", 2)), "generated")
	if err != nil {
		t.Fatal(err)
	}
	c := cluster(lab)
	before := applyYAML(t, c, &labstore.State{}, workloadYAML(4))
	after := applyYAML(t, c, before, serviceYAML(changedServicePort))
	if len(after.Pods) != len(before.Pods) {
		t.Errorf("the change went from %d to %d pods", len(before.Pods), len(after.Pods))
	}
	if len(after.Services) != 1 || after.Services[0].Spec.Ports[0].Port != changedServicePort {
		t.Errorf("want the one Service on port %d, got %v", changedServicePort, after.Services)
	}
}

func cluster(lab *topology.Lab) workload.Cluster {
	c := workload.Cluster{ServiceSubnet: lab.Spec.ServiceSubnet}
	for _, n := range lab.Spec.Nodes {
		c.Nodes = append(c.Nodes, workload.Node{Name: n.Name, PodCIDR: n.PodCIDR})
	}
	return c
}

func applyYAML(t *testing.T, c workload.Cluster, cur *labstore.State, manifest string) *labstore.State {
	t.Helper()
	m, err := workload.Decode([]byte(manifest), "generated")
	if err != nil {
		t.Fatal(err)
	}
	next, err := c.Apply(cur, m, "generated")
	if err != nil {
		t.Fatal(err)
	}
	return next
}
