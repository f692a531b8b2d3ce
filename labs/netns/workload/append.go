package workload

// Append adds the objects of more after m's, as if more's documents
// followed m's in one manifest (document numbers continue after m's last),
// for callers that decode a large generated manifest in parts of at most
// MaxManifestObjects each (svclab bench dataplane's thousands of
// Services). Each part was bounded and validated by Decode.
func (m *Manifests) Append(more *Manifests) {
	if m.docs == nil {
		m.docs = map[any]int{}
	}
	offset := len(m.order)
	for obj, n := range more.docs {
		m.docs[obj] = offset + n
	}
	m.order = append(m.order, more.order...)
	m.Namespaces = append(m.Namespaces, more.Namespaces...)
	m.Pods = append(m.Pods, more.Pods...)
	m.Deployments = append(m.Deployments, more.Deployments...)
	m.ReplicaSets = append(m.ReplicaSets, more.ReplicaSets...)
	m.StatefulSets = append(m.StatefulSets, more.StatefulSets...)
	m.DaemonSets = append(m.DaemonSets, more.DaemonSets...)
	m.Services = append(m.Services, more.Services...)
	m.ConfigMaps = append(m.ConfigMaps, more.ConfigMaps...)
	m.EndpointSlices = append(m.EndpointSlices, more.EndpointSlices...)
}
