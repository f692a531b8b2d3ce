// Package trace follows one real connection through a lab: it opens the
// connection from a lab host, and shows each namespace the packet crossed,
// the netfilter rules it matched in each node, the DNAT and SNAT rewrites,
// the routes, neighbours and VXLAN hops used, the IPVS real server in IPVS
// mode and the conntrack entry the connection left on each node.
//
// The package has two parts. The kernel-touching part (collect*.go) opens
// the connection and gathers a Capture: `iptables-save -c` of every node
// before and after, conntrack over netlink, `ip route get` answers,
// neighbour and FDB entries, IPVS services. The pure part (analyze.go,
// counters.go, render*.go) turns a Capture into a Result and draws it as
// text, JSON or SVG; it is golden-tested on whole outputs.
//
// Which rules matched is read from counter deltas: the packet counters of
// each rule in every node's namespace before and after the connection, on
// an otherwise idle lab. The Result says so (Method); it never claims a
// match the counters do not show. The conntrack entry then confirms the
// KUBE-SEP chain: the endpoint in the entry's reply tuple is that chain's
// DNAT target.
//
// A connection to an IPv6 address is traced the same way in that family:
// `ip6tables-save -c` counters (the ip6tables program of the lab's
// backend), the inet6 conntrack entries, `ip -6 route get` and the IPv6
// neighbour table.
package trace
