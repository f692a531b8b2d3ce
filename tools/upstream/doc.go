// Package upstream proves svclab's iptables rules against upstream
// kube-proxy's own: it builds the real iptables proxier of
// k8s.io/kubernetes (pkg/proxy/iptables, the version of the kind node image
// svclab builds) behind upstream's fake iptables, feeds it the Services and
// EndpointSlices of a corpus case, and compares the whole nat and filter
// tables with what svclab's renderer programs for the same objects, byte for
// byte after the few normalizations listed in Normalize. It does the same
// for nftables mode: upstream's real nftables proxier and svclab's
// nftables renderer, each into a knftables.Fake, whole Dump()s compared
// (nftables.go, NormalizeNFTDump).
//
// Both comparisons run per IP family, as upstream's metaproxier runs one
// proxier per family: a case's options.ipFamily (IPv4 when empty, IPv6, or
// DualStack for both) picks upstream's proxiers of those families
// (NewProxier with IPv6, its IPv6 fake iptables, an ip6 knftables.Fake),
// and each is compared with svclab's render of the same family
// (family.go: Case.Families, Case.ForFamily).
//
// It is a module of its own (tools/upstream/go.mod) so that svclab itself
// never links k8s.io/kubernetes; `make test-upstream` runs it.
package upstream
