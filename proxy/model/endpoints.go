package model

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// endpointsForPort resolves the endpoints of one service port from its
// service's EndpointSlices.
//
// Upstream: EndpointSliceCache.endpointInfoByServicePort and addEndpoints
// (pkg/proxy/endpointslicecache.go):
//   - a slice port belongs to the service port with the same name and
//     protocol; ports with a nil name, or a nil or zero port number, are
//     ignored;
//   - only the first address of an endpoint is used;
//   - ready and serving default to true, terminating to false;
//   - when the same IP:port appears twice (an endpoint moving between slices,
//     or a pod IP reused while the old pod terminates), a non-terminating copy
//     wins over a terminating one; otherwise the later slice (by name) wins;
//   - the result is sorted by "IP:port" string.
func endpointsForPort(family corev1.IPFamily, name ServicePortName, slicesOfService []*discoveryv1.EndpointSlice, nodeName string) []Endpoint {
	var out []Endpoint
	index := map[string]int{} // "IP:port" → position in out
	for _, slice := range slicesOfService {
		weights := sliceWeights(slice)
		for _, port := range slice.Ports {
			if port.Name == nil || *port.Name != name.Port || port.Port == nil || *port.Port == 0 {
				continue
			}
			protocol := corev1.ProtocolTCP
			if port.Protocol != nil {
				protocol = *port.Protocol
			}
			if protocol != name.Protocol {
				continue
			}
			for i := range slice.Endpoints {
				ep, ok := newEndpoint(family, &slice.Endpoints[i], *port.Port, nodeName)
				if !ok {
					continue
				}
				ep.Weight = weights[ep.IP.String()]
				key := ep.String()
				if at, exists := index[key]; exists {
					if !ep.Terminating {
						out[at] = ep
					}
					continue
				}
				index[key] = len(out)
				out = append(out, ep)
			}
		}
	}
	sortEndpoints(out)
	return out
}

// sortEndpoints sorts by the "IP:port" string, as upstream's byEndpoint:
// string order, so 10.0.0.10:80 sorts before 10.0.0.2:80.
func sortEndpoints(eps []Endpoint) {
	if len(eps) < 2 {
		return
	}
	type keyed struct {
		key string
		ep  Endpoint
	}
	tmp := make([]keyed, len(eps))
	for i, ep := range eps {
		tmp[i] = keyed{ep.String(), ep}
	}
	slices.SortFunc(tmp, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	for i := range tmp {
		eps[i] = tmp[i].ep
	}
}

func newEndpoint(family corev1.IPFamily, e *discoveryv1.Endpoint, port int32, nodeName string) (Endpoint, bool) {
	if len(e.Addresses) == 0 {
		return Endpoint{}, false
	}
	ip, ok := parseAddrSloppy(e.Addresses[0])
	if !ok || !isFamily(ip, family) {
		return Endpoint{}, false
	}
	ep := Endpoint{
		IP:          ip,
		Port:        port,
		Ready:       e.Conditions.Ready == nil || *e.Conditions.Ready,
		Serving:     e.Conditions.Serving == nil || *e.Conditions.Serving,
		Terminating: e.Conditions.Terminating != nil && *e.Conditions.Terminating,
	}
	if e.NodeName != nil {
		ep.NodeName = *e.NodeName
		ep.IsLocal = nodeName != "" && ep.NodeName == nodeName
	}
	return ep, true
}
