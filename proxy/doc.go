// Package proxy is svclab's embedded kube-proxy: a sync loop that watches
// Services and EndpointSlices from a Source (a lab's object store or a real
// cluster's API server), turns them into the proxy's model, and hands each
// snapshot to a mode's Backend, which writes kernel state — iptables rules
// through one iptables-restore transaction per sync in iptables mode, IPVS
// services and ipsets through netlink in ipvs mode, one knftables
// transaction on table ip kube-proxy in nftables mode.
//
// The loop follows upstream's shape (pkg/proxy/iptables Proxier.syncRunner):
// changes are coalesced, syncs are at least MinSyncPeriod apart, a periodic
// resync runs every SyncPeriod, and a failed sync is retried as a full sync.
package proxy
