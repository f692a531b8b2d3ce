package modeltest

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/model"
)

// TrackerSteps reads data as a sequence of up to steps changes to a
// model.Tracker of family: each step generates objects from a chunk
// (Generate) and sets, deletes or leaves each of them, then hands the
// tracker's snapshot to check. Renderers that keep state between syncs
// check their partial syncs against full ones with it.
func TrackerSteps(family corev1.IPFamily, data []byte, steps int, check func(step int, snap *model.Snapshot)) {
	tr := model.NewTracker(family, NodeName)
	for step := 0; len(data) > 0 && step < steps; step++ {
		n := min(len(data), 1+int(data[0]))
		chunk, choices := data[1:n], data[n-1:]
		data = data[n:]
		choice := func(i int) byte { return choices[i%len(choices)] }
		svcs, sls := Generate(chunk)
		for i, s := range svcs {
			switch choice(i) % 3 {
			case 0:
				tr.SetService(s)
			case 1:
				tr.DeleteService(s.Namespace, s.Name)
			}
		}
		for i, s := range sls {
			switch choice(i+7) % 4 {
			case 0, 1:
				tr.SetEndpointSlice(s)
			case 2:
				tr.DeleteEndpointSlice(s.Namespace, s.Name)
			}
		}
		check(step, tr.Snapshot())
	}
}
