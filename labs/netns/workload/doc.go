// Package workload is a lab's API server and controllers: it turns ordinary
// Kubernetes manifests (Namespace, Pod, Service, ConfigMap, EndpointSlice,
// Deployment, ReplicaSet, StatefulSet, DaemonSet) into the objects a lab
// runs: pods placed on nodes with an IP from each of the node's pod CIDRs
// (one per IP family of the lab), Services with ipFamilyPolicy,
// ipFamilies and a cluster IP per family as the API server defaults and
// checks them, node ports, and the EndpointSlices the endpoint-slice
// controller would write for them, one set per address type (next to the
// ones written by hand). It validates as the API server does, deletes as
// `kubectl delete -f` does, and marks deleted pods terminating for their
// grace period (Delete, DeletePods, Reap).
//
// Everything here is pure: no kernel, no files. The lab package stores the
// result and makes it real (namespaces, servers, the proxy's rules).
package workload
