// Package netexec is the backend server that runs in every lab pod. It
// answers the same HTTP paths as upstream's agnhost netexec, so commands and
// tests written against Kubernetes e2e backends work unchanged:
//
//	GET /hostname  the pod name, plain text, no trailing newline
//	GET /clientip  the peer's ip:port as this server saw it (after any NAT);
//	               an IPv6 peer as [fd00:10:244:1::6]:40000, as agnhost prints it
//	GET /echo?msg= msg, echoed back
//	GET /healthz   200 "ok"
//	GET /          JSON: pod name, node name, pod IPs, client address
//
// On each of its UDP ports (Options.UDPPorts) it answers agnhost's UDP
// commands, one datagram each: "hostname", "echo <msg>" and "clientip"
// (udp.go). A UDP port may have the number of an HTTP port.
//
// Bound to all addresses (a pod's server), each port is one socket of
// both families, as agnhost's `:PORT` listeners are: IPv6 on [::], IPv4
// arriving on it as ::ffff:a.b.c.d and said as a.b.c.d.
//
// There is deliberately no /shell or /exit.
//
// Connections are HTTP/1.1 keep-alive and the server never closes an idle
// connection after a response: the client closes first, so the TIME_WAIT
// state, and the conntrack entry a lab inspects, sits on the client's side
// as it does in a cluster. The only server-side closes are for a client that
// opens a connection and sends no request header within a minute, and
// graceful shutdown when Serve's context is cancelled.
package netexec
