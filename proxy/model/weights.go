package model

import (
	"encoding/json"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// WeightsAnnotation on an EndpointSlice gives IPVS weights to its endpoints:
// a JSON object from endpoint IP to weight, e.g. {"10.244.1.2": 3}. Upstream
// kube-proxy gives every real server weight 1 and has no such thing; svclab
// adds it so that the wrr and wlc schedulers can be shown doing what their
// names say. A lab's endpoint-slice controller writes it from the pods'
// svclab.dev/weight annotation; on a real cluster any controller may set it.
const WeightsAnnotation = "svclab.dev/endpoint-weights"

// sliceWeights reads a slice's WeightsAnnotation; a malformed one is
// ignored (all weights default), as a proxy must not fail on an annotation.
func sliceWeights(slice *discoveryv1.EndpointSlice) map[string]int32 {
	raw, ok := slice.Annotations[WeightsAnnotation]
	if !ok {
		return nil
	}
	var weights map[string]int32
	if json.Unmarshal([]byte(raw), &weights) != nil {
		return nil
	}
	for ip, w := range weights {
		if w < 0 {
			delete(weights, ip)
		}
	}
	return weights
}
