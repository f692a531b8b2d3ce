// Package iptables renders a model.Snapshot into iptables-restore input the
// way kube-proxy's iptables mode does, and applies it to the kernel.
//
// It has two halves:
//
//   - A pure, stateful Renderer (renderer.go, servicerules.go): Render turns
//     a snapshot into one payload holding both the filter and nat tables,
//     rule for rule what upstream's Proxier.syncProxyRules writes
//     (k8s.io/kubernetes/pkg/proxy/iptables/proxier.go). It caches each
//     service port's rendered rules, so after the first sync it re-renders
//     and re-sends only the service ports that changed ("partial sync"),
//     again like upstream — and, unlike upstream, leaves out the shared
//     chains (KUBE-SERVICES and the rest) when they did not change
//     (shared.go); the kernel's tables end the same.
//   - Sync (sync.go), which ties one Renderer to one kernel.Runner: the
//     apply layer, proxy/iptables/kernel, runs iptables-restore,
//     iptables-save and iptables, choosing the legacy or nf_tables backend.
//
// Three small packages beside it are shared with proxy/ipvs, which does not
// import this one: kernel (the Runner), chains (the mode's chain names) and
// localtraffic (telling pod traffic apart). The package iptablestest holds
// a fake Runner that validates payloads like the kernel does and a packet
// tracer that walks rendered rules.
//
// canary.go keeps upstream's canary (KUBE-PROXY-CANARY in mangle, nat and
// filter); the proxy's sync loop looks for it in mangle, the first table,
// every syncPeriod (one command, as upstream's Monitor) and forces a full
// resync when someone flushed it away.
//
// One Renderer programs one IP family (Options.Family), as upstream runs one
// proxier per family under its metaproxier: it renders the snapshot of
// that family (model.NewTracker(family, node) keeps only the family's
// cluster IPs, external IPs, source ranges and EndpointSlices). An IPv6
// Renderer writes ip6tables-restore input with upstream's IPv6
// differences: no localhost node ports (no KUBE-FIREWALL rule, the
// node-port tail call leaves out ::1/128), IPv6 addresses in upstream's
// forms ("-d fd00:10:96::a", "--to-destination [fd00:10:244::5]:8080").
//
// What upstream has and this package leaves out: topology-aware routing,
// nfacct counters, and the conntrack cleanup of stale UDP entries after a
// sync (the sync loop's, for every mode: proxy/staleudp.go). Load
// balancer IPs, source ranges (KUBE-FW chains), health check node ports,
// external IPs, session affinity and both traffic policies are rendered.
package iptables
