package labstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWriteDeltaIsWriteObjectsOfTheResult: a delta of one changed slice, one
// new slice and one removed Service leaves the store as WriteObjects of the
// whole result would, bumps the generation once, and touches nothing else.
func TestWriteDeltaIsWriteObjectsOfTheResult(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("delta")
	before := everyKind()
	gen, err := s.WriteObjects(before)
	if err != nil {
		t.Fatal(err)
	}
	changed := before.EndpointSlices[0].DeepCopy()
	changed.Endpoints[0].Addresses = []string{"10.244.1.6"}
	added := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "extra-1"}, AddressType: discoveryv1.AddressTypeIPv4}
	d := &Delta{
		Write:  &State{EndpointSlices: []*discoveryv1.EndpointSlice{changed, added}},
		Remove: &State{Services: before.Services},
	}
	got, err := s.WriteDelta(d)
	if err != nil {
		t.Fatal(err)
	}
	if got != gen+1 {
		t.Errorf("generation after the delta: %d, want %d", got, gen+1)
	}
	want := before.Clone()
	want.Services = nil
	want.EndpointSlices = []*discoveryv1.EndpointSlice{changed, added}
	whole := Open("whole")
	if _, err := whole.WriteObjects(want); err != nil {
		t.Fatal(err)
	}
	if got, want := objectFiles(t, s), objectFiles(t, whole); !reflect.DeepEqual(got, want) {
		t.Errorf("files after the delta:\n%v\nwant (WriteObjects of the result)\n%v", got, want)
	}
	if again, err := s.WriteDelta(d); err != nil || again != got {
		t.Errorf("the same delta again: generation %d, %v; want %d unchanged", again, err, got)
	}
}

// TestReadForSliceChanges: ReadObjectsButServices holds every kind but
// Services and EndpointSlices; ReadEndpointSlice finds a stored slice by
// name and says nil of one there is not.
func TestReadForSliceChanges(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("partial")
	all := everyKind()
	if _, err := s.WriteObjects(all); err != nil {
		t.Fatal(err)
	}
	small, _, err := s.ReadObjectsButServices()
	if err != nil {
		t.Fatal(err)
	}
	want := all.Clone()
	want.Services, want.EndpointSlices = nil, nil
	slices.Reverse(want.ConfigMaps) // read in file name order: "shop.long-…" sorts first
	if !reflect.DeepEqual(stripTypes(small), stripTypes(want)) {
		t.Errorf("ReadObjectsButServices:\n%+v\nwant\n%+v", small, want)
	}
	sl, err := s.ReadEndpointSlice("shop", "web-x1")
	if err != nil || sl == nil || sl.Endpoints[0].Addresses[0] != "10.244.1.5" {
		t.Errorf("ReadEndpointSlice(shop, web-x1) = %+v, %v", sl, err)
	}
	if sl, err := s.ReadEndpointSlice("shop", "none"); sl != nil || err != nil {
		t.Errorf("ReadEndpointSlice(shop, none) = %+v, %v; want nil, nil", sl, err)
	}
}

// objectFiles maps every file below the store's objects/ but GENERATION
// to its content.
func objectFiles(t *testing.T, s *Store) map[string]string {
	t.Helper()
	files := map[string]string{}
	root := s.Path("objects")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "GENERATION" {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// stripTypes is st with every object's TypeMeta cleared (the store's
// files carry apiVersion and kind; the objects written need not).
func stripTypes(st *State) *State {
	out := st.Clone()
	for _, o := range out.Namespaces {
		o.TypeMeta = metav1.TypeMeta{}
	}
	for _, o := range out.Deployments {
		o.TypeMeta = metav1.TypeMeta{}
	}
	for _, o := range out.ReplicaSets {
		o.TypeMeta = metav1.TypeMeta{}
	}
	for _, o := range out.StatefulSets {
		o.TypeMeta = metav1.TypeMeta{}
	}
	for _, o := range out.DaemonSets {
		o.TypeMeta = metav1.TypeMeta{}
	}
	for _, o := range out.Pods {
		o.TypeMeta = metav1.TypeMeta{}
	}
	for _, o := range out.Services {
		o.TypeMeta = metav1.TypeMeta{}
	}
	for _, o := range out.ConfigMaps {
		o.TypeMeta = metav1.TypeMeta{}
	}
	for _, o := range out.EndpointSlices {
		o.TypeMeta = metav1.TypeMeta{}
	}
	return out
}
