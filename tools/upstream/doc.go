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
// It is a module of its own (tools/upstream/go.mod) so that svclab itself
// never links k8s.io/kubernetes; `make test-upstream` runs it.
package upstream
