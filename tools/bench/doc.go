// Package bench is `svclab bench dataplane`: for every proxy mode and
// number of Services asked, it builds a fresh one-node lab, applies N
// generated Services whose endpoints are two real pod servers, and
// measures on the node's kernel
//
//   - the programming time: from the start of the apply to the last
//     Service's rule being visible (iptables -S of its KUBE-SVC chain, nft
//     get element of the service-ips map, ipvsadm -Ln of its virtual
//     server), split into the lab's part (objects in the store) and the
//     proxy's (store → kernel);
//   - the first-packet latency: the TCP connect time of fresh connections
//     from a client pod to the first and the last Service of the list,
//     through the node's real rules (p50/p99);
//   - the CPU time the node's proxy and its children (iptables-restore)
//     used, from /proc/PID/stat.
//
// Each lab is deleted before the next is built, so one mode's rules never
// slow another's. The pure parts (result types, statistics, table, JSON,
// SVG) are in package report; what to generate (lab file, manifests) is in
// objects.go, pure too; the rest touches the kernel.
//
// `svclab bench traffic` (traffic*.go) measures, per mode on a lab of its
// own, new connections per second from a client pod through a ClusterIP
// and straight to its one endpoint's pod IP, their connect times, and the
// client's own CPU per connection; its result types are in package report
// too (TrafficResult).
package bench
