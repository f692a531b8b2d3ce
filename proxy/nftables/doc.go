// Package nftables is kube-proxy's nftables mode: it renders a model
// snapshot into one knftables transaction on upstream v1.36's structure
// (pkg/proxy/nftables/proxier.go), and runs it against a knftables.Interface.
//
// Layers: names.go, options.go and storage.go are pure helpers; renderer.go
// turns a snapshot plus what the kernel holds (a View) into a transaction
// without touching the kernel; sync.go is the only code that talks to the
// kernel (reads the View, runs the transaction, deletes stale chains later);
// cleanup.go removes the table, as upstream's CleanupLeftovers.
//
// The table (`table ip kube-proxy`, `table ip6 kube-proxy` for IPv6):
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
