package model_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// objectSet is the objects a tracker was told about, by namespace/name: what
// a full List would return.
type objectSet struct {
	services map[string]*corev1.Service
	slices   map[string]*discoveryv1.EndpointSlice
}

func (o *objectSet) lists() ([]*corev1.Service, []*discoveryv1.EndpointSlice) {
	var svcs []*corev1.Service
	var sls []*discoveryv1.EndpointSlice
	for _, s := range o.services {
		svcs = append(svcs, s)
	}
	for _, s := range o.slices {
		sls = append(sls, s)
	}
	return svcs, sls
}

// applyChanges reads data as a sequence of steps: each step generates
// objects from a chunk (modeltest.Generate) and sets, deletes or skips each of them
// in both the tracker and the object set, then compares the tracker's
// snapshot with a full build of the object set.
func applyChanges(t *testing.T, data []byte) {
	trackers := map[corev1.IPFamily]*model.Tracker{
		corev1.IPv4Protocol: model.NewTracker(corev1.IPv4Protocol, modeltest.NodeName),
		corev1.IPv6Protocol: model.NewTracker(corev1.IPv6Protocol, modeltest.NodeName),
	}
	set := &objectSet{services: map[string]*corev1.Service{}, slices: map[string]*discoveryv1.EndpointSlice{}}
	for step := 0; len(data) > 0 && step < 8; step++ {
		n := min(len(data), 1+int(data[0]))
		chunk, choices := data[1:n], data[n-1:]
		data = data[n:]
		svcs, sls := modeltest.Generate(chunk)
		choice := func(i int) byte { return choices[i%len(choices)] }
		for i, s := range svcs {
			key := s.Namespace + "/" + s.Name
			if choice(i)%3 == 1 {
				continue // left alone: its slices may change without it
			}
			if choice(i)%3 == 0 && choice(i)%2 == 0 {
				delete(set.services, key)
				for _, tr := range trackers {
					tr.DeleteService(s.Namespace, s.Name)
				}
				continue
			}
			set.services[key] = s
			for _, tr := range trackers {
				tr.SetService(s)
			}
		}
		for i, s := range sls {
			key := s.Namespace + "/" + s.Name
			if choice(i+7)%5 == 1 {
				continue
			}
			if choice(i+7)%5 == 0 {
				delete(set.slices, key)
				for _, tr := range trackers {
					tr.DeleteEndpointSlice(s.Namespace, s.Name)
				}
				continue
			}
			set.slices[key] = s
			for _, tr := range trackers {
				tr.SetEndpointSlice(s)
			}
		}
		if choice(3)%5 == 0 {
			// Now and then a full resync from the object set.
			svcList, sliceList := set.lists()
			for _, tr := range trackers {
				tr.Replace(svcList, sliceList)
			}
		}
		svcList, sliceList := set.lists()
		for family, tr := range trackers {
			got := tr.Snapshot()
			want := model.BuildFamily(family, svcList, sliceList, modeltest.NodeName)
			if diff := snapshotDiff(got, want); diff != "" {
				t.Fatalf("step %d, %s: the tracker's snapshot differs from a full build:\n%s", step, family, diff)
			}
		}
	}
}

func snapshotDiff(got, want *model.Snapshot) string {
	var b strings.Builder
	if got.NodeName != want.NodeName || got.Family != want.Family {
		fmt.Fprintf(&b, "node/family %s/%s, want %s/%s\n", got.NodeName, got.Family, want.NodeName, want.Family)
	}
	if len(got.ServicePorts) != len(want.ServicePorts) {
		fmt.Fprintf(&b, "%d service ports, want %d\n", len(got.ServicePorts), len(want.ServicePorts))
	}
	for i := range min(len(got.ServicePorts), len(want.ServicePorts)) {
		if !got.ServicePorts[i].Equal(want.ServicePorts[i]) {
			fmt.Fprintf(&b, "service port %d: %+v\nwant %+v\n", i, *got.ServicePorts[i], *want.ServicePorts[i])
		}
	}
	return b.String()
}

// TestTrackerMatchesBuild is the property test: on random change sequences
// (2000 of them, up to 8 steps each) the incremental snapshot equals a full
// Build of the same objects.
func TestTrackerMatchesBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2))
	for range 2000 {
		data := make([]byte, rng.IntN(2000))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		applyChanges(t, data)
	}
}

// FuzzTrackerMatchesBuild is the same property under the fuzzer.
func FuzzTrackerMatchesBuild(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 80))
	f.Add(bytes.Repeat([]byte{200, 7, 1, 8, 2, 8, 1, 8, 2, 8}, 60))
	f.Add([]byte{40, 5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 0, 0, 4, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<14 {
			return
		}
		applyChanges(t, data)
	})
}

// TestTrackerKeepsUnchangedServicePorts checks the promise renderers rely
// on: after one endpoint of one service changes, every other service port
// is the same pointer as before, and the changed one is new.
func TestTrackerKeepsUnchangedServicePorts(t *testing.T) {
	tr := model.NewTracker(corev1.IPv4Protocol, "node-a")
	for i := range 50 {
		svc, sl := benchObjects(i, 3)
		tr.SetService(svc)
		tr.SetEndpointSlice(sl)
	}
	before := tr.Snapshot()
	if !before.StablePointers {
		t.Errorf("a tracker's snapshot does not promise StablePointers")
	}
	if built := model.BuildFamily(corev1.IPv4Protocol, nil, nil, "node-a"); built.StablePointers {
		t.Errorf("a built snapshot promises StablePointers")
	}
	_, sl := benchObjects(17, 3)
	sl.Endpoints[0].Addresses = []string{"10.250.0.1"}
	tr.SetEndpointSlice(sl)
	if tr.Pending() != 1 {
		t.Fatalf("Pending = %d after one slice update, want 1", tr.Pending())
	}
	after := tr.Snapshot()
	if len(after.ServicePorts) != len(before.ServicePorts) {
		t.Fatalf("%d service ports, want %d", len(after.ServicePorts), len(before.ServicePorts))
	}
	for i, sp := range after.ServicePorts {
		same := sp == before.ServicePorts[i]
		if changed := sp.Name.Name == "svc17"; same == changed {
			t.Errorf("service port %s: same pointer %v, want %v", sp.Name, same, !changed)
		}
	}
	// An update that changes nothing keeps every pointer.
	svc, sl := benchObjects(17, 3)
	sl.Endpoints[0].Addresses = []string{"10.250.0.1"}
	tr.SetService(svc)
	tr.SetEndpointSlice(sl)
	again := tr.Snapshot()
	for i, sp := range again.ServicePorts {
		if sp != after.ServicePorts[i] {
			t.Errorf("service port %s: new pointer after an update that changed nothing", sp.Name)
		}
	}
}

// benchObjects is the i-th Service of a generated cluster and its one
// EndpointSlice with eps endpoints on another node.
func benchObjects(i, eps int) (*corev1.Service, *discoveryv1.EndpointSlice) {
	ns, name := fmt.Sprintf("ns%d", i/100), fmt.Sprintf("svc%d", i)
	ip := netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}).String()
	svc := fixtures.Service(ns, name, ip, []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	sl := fixtures.NamedEndpointSlice(ns, name, name+"-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)})
	for j := range eps {
		k := i*eps + j
		sl.Endpoints = append(sl.Endpoints, fixtures.Endpoint(netip.AddrFrom4([4]byte{10, byte(128 + k>>16), byte(k >> 8), byte(k)}).String(), "node-b"))
	}
	return svc, sl
}
