package netns

import (
	"testing"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/netns/workload"
)

// TestClusterOfDualLab: a dual lab's API server has a Service range of
// each family and its nodes a pod CIDR of each, so a PreferDualStack
// Service gets a cluster IP of each family and a pod an IP of each.
func TestClusterOfDualLab(t *testing.T) {
	topo, err := topology.Parse([]byte(`
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: dual}
spec:
  cni: flannel-vxlan
  ipFamily: dual
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  nodes:
  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}
`), "dual.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := workload.Decode([]byte(`
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec: {containers: [{name: web, image: x}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ipFamilyPolicy: PreferDualStack, selector: {app: web}, ports: [{port: 80}]}
`), "web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st, err := (&Lab{Topology: topo}).Cluster().Apply(&labstore.State{}, m, "web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Service("default", "web").Spec.ClusterIPs; len(got) != 2 || got[0] != "10.96.0.11" || got[1] != "fd00:10:96::b" {
		t.Errorf("clusterIPs %v, want 10.96.0.11 and fd00:10:96::b", got)
	}
	if got := st.Pod("web").Status.PodIPs; len(got) != 2 || got[0].IP != "10.244.1.2" || got[1].IP != "fd00:10:244:1::2" {
		t.Errorf("podIPs %v, want 10.244.1.2 and fd00:10:244:1::2", got)
	}
}
