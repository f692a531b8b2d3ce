// Package clusterdns is a lab's cluster DNS: the server behind the
// kube-system/kube-dns Service that every netns lab gets, answering as the
// Kubernetes DNS-Based Service Discovery specification says
// (https://github.com/kubernetes/dns/blob/master/docs/specification.md,
// schema 1.0.1) and as CoreDNS's kubernetes plugin does where the
// specification leaves room:
//
//	<svc>.<ns>.svc.<zone>                 A: the ClusterIP; headless: the ready endpoints' IPs
//	<hostname>.<svc>.<ns>.svc.<zone>      A: the endpoint (its hostname, else its IP with dashes)
//	_<port>._<proto>.<svc>.<ns>.svc.<zone> SRV for every named port (ClusterIP and headless forms)
//	<svc>.<ns>.svc.<zone>                 CNAME for an ExternalName Service
//	<a-b-c-d>.<ns>.pod.<zone>             A (the deprecated pod records, "pods insecure")
//	<d>.<c>.<b>.<a>.in-addr.arpa          PTR for Service ClusterIPs and endpoint IPs
//	dns-version.<zone>                    TXT "1.0.1"
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
