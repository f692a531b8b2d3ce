package kit

import (
	"context"
	"net/netip"
)

// What a failed conformance spec attaches as evidence is read through
// Workspace where it can be (iptables-save -c, nft -j, conntrack, one
// connection with TrafficWith); the interfaces here are what only some
// workspaces can add, checked with a type assertion.

// ConnectionTracer is a workspace that traces one connection through
// the kernel objects it crossed, as `svclab trace` does on a netns lab
// (labs/netns/trace): each namespace on the path, the rules whose
// counters the connection moved, the NAT rewrites, routes and VXLAN hops.
// A workspace without it is traced by the conformance suite from
// Workspace alone: the rule-counter difference around one connection on
// the node it enters at.
type ConnectionTracer interface {
	// TraceConnection opens one connection (proto "tcp" or "udp") from
	// from to to and returns its trace as text.
	TraceConnection(ctx context.Context, from Client, to netip.AddrPort, proto string) (string, error)
}

// IPVSLister is a workspace that lists a node's IPVS table: every
// virtual server and its real servers, in the shape of `ipvsadm -Ln`
// (a line "TCP  10.96.0.10:80 rr" per virtual server, then a line
// "  -> 10.244.1.5:8080 …" per real server).
type IPVSLister interface {
	IPVS(ctx context.Context, node string) (string, error)
}
