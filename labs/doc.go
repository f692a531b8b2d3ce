// Package labs is the folder of svclab's two lab backends and what they
// share; it holds no code of its own, only the test that keeps its walls
// (imports_test.go).
//
//   - labs/netns: a lab of network namespaces on this machine (nodes, pods
//     and an outside client joined by veths, bridges and VXLAN), its
//     transaction, network, topology, workloads, trace and graph;
//   - labs/kind: kind clusters built offline on svclab's own dockerd, a
//     facade over labs/kind/internal, with the in-node entry points
//     labs/kind/cni and labs/kind/loadbalancer;
//   - labs/agents: what runs inside a node or a pod of either backend (the
//     supervisor, the pods' server, cluster DNS, the traffic client, the
//     conntrack reader, and the typed command lines that start them);
//   - labs/podnet: the facts both backends' pod networks share.
//
// The two backends import neither each other nor each other's folders; the
// agents and podnet import no backend (labs/README.md, "Layout").
package labs
