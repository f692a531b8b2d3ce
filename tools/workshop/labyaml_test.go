package workshop

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/netns/topology"
)

// TestLabYAML: the lesson's lab is named after the lesson and takes the
// CNI asked for; a CNI the lab format refuses is an error naming it.
func TestLabYAML(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "clusters", "lessons", "example-clusterip"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Metadata.Name = "renamed"
	data, err := LabYAML(l, "canal")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := topology.Parse(data, "lab")
	if err != nil {
		t.Fatal(err)
	}
	if lab.Name() != "renamed" || lab.Spec.CNI != topology.CNICanal || len(lab.Spec.Nodes) != 1 {
		t.Errorf("lab %s, CNI %s, %d nodes: want renamed, canal, the file's one node", lab.Name(), lab.Spec.CNI, len(lab.Spec.Nodes))
	}
	data, err = LabYAML(l, "")
	if err != nil {
		t.Fatal(err)
	}
	if lab, _ := topology.Parse(data, "lab"); lab == nil || lab.Spec.CNI != topology.CNIFlannelVXLAN {
		t.Errorf("no CNI given: want the lab file's flannel-vxlan")
	}
	if _, err := LabYAML(l, "weave"); err == nil || !strings.Contains(err.Error(), "weave") {
		t.Errorf("CNI weave: got %v, want an error naming it", err)
	}
}
