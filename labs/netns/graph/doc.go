// Package graph draws a lab's topology: the router, the nodes, the clients
// and the pods, each with its interfaces and addresses, the LAN bridges,
// the pod bridges (cni0) and VXLAN devices, and the links between them.
//
// Build derives a Graph from what the lab's network plan really builds
// (network.PlanLab and network.PlanPod for each pod in the lab's store):
// every interface comes from a step that creates it (veth, bridge, VXLAN),
// every address from an address step, every link from a veth pair or from
// the FDB entries that join two VTEPs. Nothing about a CNI is assumed here,
// so flannel-vxlan, calico-proxyarp and canal each come out as the planner
// builds them.
//
// The renderers turn a Graph into Graphviz DOT, a Mermaid flowchart, or an
// SVG picture laid out by this package (router on top, clients beside it,
// the LANs as buses, nodes in a row with their pods below). All of it is
// pure: no kernel, no external program.
package graph
