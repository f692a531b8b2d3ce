package netns_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
)

// TestIntegrationApplySlicesTouchesOnlyThem: in a two-node lab, an apply
// of a hand-written EndpointSlice alone (the change of a few slices,
// applyslices.go) stores the new slice, writes no other object's file,
// says it created the slice only the first time, leaves the journal clear
// and returns once both proxies acknowledged the new generation; a slice
// that claims a controller's slice's name is refused, as the whole apply
// refuses it.
func TestIntegrationApplySlicesTouchesOnlyThem(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	opts := netns.Options{Binary: roottest.SharedBinary(t)}
	topo, err := os.ReadFile(filepath.Join(clustersDir(), "nodeport.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	name := roottest.UniqueName("slices")
	lab, _, err := netns.Create(context.Background(), writeFile(t, "lab.yaml", strings.Replace(string(topo), "name: nodeport", "name: "+name, 1)), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netns.Delete(name) })
	if err := lab.Apply(context.Background(), writeFile(t, "svc.yaml", handSliceService+"---\n"+handSlice("10.244.1.100")), opts); err != nil {
		t.Fatal(err)
	}
	before := modTimes(t, lab.Store)
	var out bytes.Buffer
	opts.Out = &out
	if err := lab.Apply(context.Background(), writeFile(t, "slice.yaml", handSlice("10.244.1.101")), opts); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Errorf("apply of a changed slice said:\n%s", &out)
	}
	after := modTimes(t, lab.Store)
	for file, mt := range after {
		if file != "endpointslices/default.hand-1.yaml" && file != "GENERATION" && !before[file].Equal(mt) {
			t.Errorf("%s was written by a change of one slice", file)
		}
	}
	st, gen, err := lab.Store.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	if s := sliceOf(st, "default", "hand"); s == nil || s.Endpoints[0].Addresses[0] != "10.244.1.101" {
		t.Errorf("stored slice of hand: %+v, want 10.244.1.101", s)
	}
	statuses, err := lab.Store.ProxyStatuses()
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"hosta", "hostb"} {
		if statuses[node].Generation < gen {
			t.Errorf("proxy on %s at generation %d after the apply, want %d", node, statuses[node].Generation, gen)
		}
	}
	if in, err := lab.Store.ReadIntent(); in != nil || err != nil {
		t.Errorf("journal after the apply: %+v, %v", in, err)
	}
	out.Reset()
	if err := lab.Apply(context.Background(), writeFile(t, "new.yaml", strings.ReplaceAll(handSlice("10.244.1.102"), "hand-1", "hand-2")), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "endpointslice.discovery.k8s.io/hand-2 created") {
		t.Errorf("apply of a new slice said %q", &out)
	}
	controllers := sliceOf(st, "kube-system", "kube-dns")
	if controllers == nil {
		t.Fatal("no EndpointSlice of kube-system/kube-dns")
	}
	claim := strings.NewReplacer("hand-1", controllers.Name, "namespace: default", "namespace: kube-system").Replace(handSlice("10.244.1.103"))
	if err := lab.Apply(context.Background(), writeFile(t, "claim.yaml", claim), opts); err == nil || !strings.Contains(err.Error(), "the EndpointSlice controller's slice") {
		t.Errorf("apply of a slice named as the controller's: %v", err)
	}
}

const handSliceService = `apiVersion: v1
kind: Service
metadata:
  name: hand
  namespace: default
spec:
  ports:
  - port: 80
    targetPort: 8080
`

// handSlice is Service hand's EndpointSlice with one endpoint.
func handSlice(addr string) string {
	return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: hand-1
  namespace: default
  labels:
    kubernetes.io/service-name: hand
addressType: IPv4
endpoints:
- addresses: ["` + addr + `"]
ports:
- port: 8080
`
}

// modTimes are the modification times of the files below the store's
// objects/, by their path there.
func modTimes(t *testing.T, s *labstore.Store) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	root := s.Path("objects")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[rel] = info.ModTime()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
