package netns

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/topology"
)

const flannelLab = `apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: once}
spec:
  cni: flannel-vxlan
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  nodes:
  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}
`

// TestCreateStoresTheFileItValidated: Create read the lab file twice, to
// validate it and to store it, so a file changed in between gave a lab
// whose stored lab.yaml was never validated. It reads the file once
// (readLabFile) and stores those bytes (journalCreate): the lab every
// later command opens is the one validated, whatever the file holds by
// then.
func TestCreateStoresTheFileItValidated(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", filepath.Join(t.TempDir(), "labs"))
	path := filepath.Join(t.TempDir(), "once.yaml")
	if err := os.WriteFile(path, []byte(flannelLab), 0o644); err != nil {
		t.Fatal(err)
	}
	labFile, topo, err := readLabFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The file changes while the lab is built.
	if err := os.WriteFile(path, []byte(strings.Replace(flannelLab, "flannel-vxlan", "canal", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	lab := &Lab{Topology: topo, Store: labstore.Open(topo.Name())}
	if err := lab.journalCreate(labFile); err != nil {
		t.Fatal(err)
	}
	stored, err := os.ReadFile(lab.Store.Path("lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored, []byte(flannelLab)) {
		t.Errorf("stored lab.yaml:\n%s\nwant the file as validated:\n%s", stored, flannelLab)
	}
	opened, err := Open(topo.Name())
	if err != nil {
		t.Fatal(err)
	}
	if opened.Topology.Spec.CNI != topology.CNIFlannelVXLAN {
		t.Errorf("the lab opens with CNI %s, want %s as validated", opened.Topology.Spec.CNI, topology.CNIFlannelVXLAN)
	}
	if in, err := lab.Store.ReadIntent(); err != nil || in == nil || in.Op != labstore.OpCreate {
		t.Errorf("journal = %+v, %v; want the create recorded before the lab file", in, err)
	}
}

// TestCreateRefusesAnInvalidFile: the one read is validated, and every
// problem of the file is said.
func TestCreateRefusesAnInvalidFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	bad := strings.Replace(strings.Replace(flannelLab, "flannel-vxlan", "cilium", 1), "name: node1", "name: router", 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, topo, err := readLabFile(path)
	want := "topology " + path + `: spec.cni "cilium": unknown CNI (one of "flannel-vxlan", "calico-proxyarp", "canal")` + "\n" +
		"topology " + path + `: spec.nodes[0].name "router": reserved for the lab's edge router`
	if topo != nil || err == nil || err.Error() != want {
		t.Errorf("readLabFile = %v, %v\nwant no lab and\n%s", topo, err, want)
	}
}
