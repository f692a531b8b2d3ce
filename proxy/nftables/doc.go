// Package nftables is kube-proxy's nftables mode: it renders a model
// snapshot into one knftables transaction on upstream v1.36's structure
// (pkg/proxy/nftables/proxier.go), and runs it against a knftables.Interface.
//
// Layers: names.go, namecache.go, options.go are pure helpers; storage.go
// and services.go are what the committed transactions wrote (each set's
// and map's elements, and per service its chains, affinity sets and wanted
// elements); renderer.go turns a snapshot into a transaction without
// touching the kernel; sync.go is the only code that talks to the kernel
// (reads a View on full syncs, runs the transaction, deletes stale chains
// later); cleanup.go removes the table, as upstream's CleanupLeftovers.
//
// O(changed) at the kernel boundary: a partial sync reads nothing from
// the kernel and rewrites only the services that changed (upstream lists
// the table on every sync, kubernetes#139513); a sync with nothing to
// change and no stale chain due runs no nft at all; the kernel is read on
// full syncs (the first, hourly, after an error, when the proxy loop asks)
// so a change made outside svclab is repaired by the next full sync.
// Chain names are hashed once per service port. As upstream v1.36.4, a
// service with one endpoint still DNATs through a one-entry numgen map
// (upstream's PR #140723, which drops that map, is not in v1.36).
//
// One Renderer programs one IP family (Options.Family), as upstream runs
// one proxier per family: `table ip kube-proxy` for IPv4, `table ip6
// kube-proxy` for IPv6, each from the snapshot of its family
// (model.NewTracker(family, node)); tools/upstream compares both with
// upstream's IPv4 and IPv6 proxiers (options.ipFamily of its corpus).
//
// The table:
//
//   - base chains filter-prerouting-pre-dnat, filter-output-pre-dnat
//     (filter, dstnat-10), filter-input, filter-forward, filter-output
//     (filter, filter), nat-prerouting, nat-output (nat, dstnat) and
//     nat-postrouting (nat, srcnat), jumping to the regular chains services,
//     masquerading, service-endpoints-check, nodeport-endpoints-check,
//     firewall-check and cluster-ips-check;
//   - verdict maps service-ips (address . protocol . port → goto
//     service chain) and service-nodeports (protocol . port), the
//     no-endpoint-services / no-endpoint-nodeports maps (drop, or goto
//     reject-chain), firewall-ips (loadBalancerSourceRanges), the sets
//     cluster-ips, nodeport-ips (only with --nodeport-addresses) and
//     hairpin-connections;
//   - per service port: service-HASH-ns/name/proto/port (Cluster policy),
//     local-… (Local policy), external-… (NodePort, external and load
//     balancer IPs), firewall-…; the service chains load-balance with
//     `numgen random mod N` and DNAT in one map lookup; with ClientIP
//     affinity they jump to per-endpoint chains endpoint-… that update the
//     affinity set affinity-… (timeout = the affinity timeout) and DNAT.
//
// Upstream v1.36 has no mark-for-masquerade chain and no per-endpoint
// chains without affinity: masquerading is `mark set mark or 0x4000` inline
// plus the masquerading chain, and hairpin traffic (a local endpoint
// reaching itself through its service) is masqueraded through the
// hairpin-connections set.
package nftables
