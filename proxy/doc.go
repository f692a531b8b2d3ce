// Package proxy is svclab's embedded kube-proxy: a sync loop that watches
// Services and EndpointSlices from a Source (a lab's object store or a real
// cluster's API server), turns them into the proxy's model, and hands each
// snapshot to a mode's Backend, which writes kernel state — iptables rules
// through one iptables-restore transaction per sync in iptables mode, IPVS
// services and ipsets through netlink in ipvs mode, one knftables
// transaction on table ip kube-proxy in nftables mode.
//
// Like upstream's metaproxier, the proxy runs one model tracker and one
// backend per IP family (ipfamilies.go, dualstack.go): the primary family
// is the node's first IP's (or bindAddress's), and a second-family backend
// runs when the mode and kernel support both families — ip6tables rules
// in iptables mode, table ip6 kube-proxy in nftables mode, IPv6 virtual
// servers, KUBE-6-* ipsets and ip6tables rules in ipvs mode. A lab's node
// runs the second family only when the lab gives it an address of that
// family, so an IPv4 lab's node is exactly the single-stack IPv4 proxy it
// always was.
//
// The loop follows upstream's shape (pkg/proxy/iptables Proxier.syncRunner):
// changes are coalesced, syncs are at least MinSyncPeriod apart, a periodic
// resync runs every SyncPeriod, and a failed sync is retried as a full sync.
// A sync costs what changed: sources that implement sources.Tracking hand
// over the changed objects, which model.Tracker applies to the changed
// services only. Every FullSyncPeriod (an hour, as upstream), when a source
// lost changes, and when the backend's canary is gone (Canaried, checked
// every SyncPeriod), the loop lists everything and forces a full rewrite
// (FullSyncer). After every successful sync it deletes the conntrack
// entries of stale UDP flows, those to a Service whose endpoint is gone,
// as upstream does after each mode's sync (staleudp.go).
package proxy
