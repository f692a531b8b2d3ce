// Package workload turns ordinary Kubernetes manifests (Pod, Deployment,
// Service, ConfigMap) into the objects a lab runs: pods placed on nodes with
// an IP from the node's pod CIDR, Services with a cluster IP and node ports,
// and the EndpointSlices the endpoint-slice controller would write for them.
//
// Everything here is pure: no kernel, no files. The lab package stores the
// result and makes it real (namespaces, servers, the proxy's rules).
package workload
