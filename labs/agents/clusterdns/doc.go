// Package clusterdns is a lab's cluster DNS: the server behind the
// kube-system/kube-dns Service that every netns lab gets, answering as the
// Kubernetes DNS-Based Service Discovery specification says
// (https://github.com/kubernetes/dns/blob/master/docs/specification.md,
// schema 1.0.1) and as CoreDNS's kubernetes plugin does where the
// specification leaves room:
//
//	<svc>.<ns>.svc.<zone>                 A/AAAA: the ClusterIPs; headless: the ready endpoints' IPs
//	<hostname>.<svc>.<ns>.svc.<zone>      A/AAAA: the endpoint (its hostname, else its IP with dashes)
//	_<port>._<proto>.<svc>.<ns>.svc.<zone> SRV for every named port (ClusterIP and headless forms)
//	<svc>.<ns>.svc.<zone>                 CNAME for an ExternalName Service
//	<a-b-c-d>.<ns>.pod.<zone>             A (the deprecated pod records, "pods insecure")
//	<fd00-10-244-1--5>.<ns>.pod.<zone>    AAAA (the same for an IPv6 address)
//	<d>.<c>.<b>.<a>.in-addr.arpa          PTR for Service ClusterIPs and endpoint IPs
//	<nibbles>.ip6.arpa                    PTR for IPv6 ClusterIPs and endpoint IPs
//	dns-version.<zone>                    TXT "1.0.1"
//
// Both families come from the objects: an A record for each IPv4 entry of
// a Service's spec.clusterIPs, an AAAA record for each IPv6 one, a
// headless Service's endpoints from its IPv4 and IPv6 EndpointSlices. A
// name asked for the family it lacks (AAAA of an IPv4-only Service) is
// NODATA, as CoreDNS answers it.
//
// A name in the zone that does not exist is NXDOMAIN, a name that exists
// without records of the asked type NODATA, both with the zone's SOA in the
// authority section; a name outside the zone and the reverse zones is
// REFUSED: the server forwards nothing (no lab namespace reaches outside
// the machine).
//
// The pure part (index.go, answer.go) turns the lab's objects into an Index
// and a query into a whole response; serve.go is the edge: UDP and TCP
// listeners (github.com/miekg/dns) and the lab store's watch, which
// rebuilds the Index on every change of the store's generation.
package clusterdns
