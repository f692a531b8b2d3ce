// Package ipvs is svclab's IPVS proxy mode: what kube-proxy --proxy-mode=ipvs
// writes into the kernel, computed as plain data and applied with the
// fewest kernel calls.
//
// It is built in four layers, pure core to thin edge:
//
//  1. Compute (compute.go, rules.go) turns a *model.Snapshot and Settings
//     into a Desired state: the addresses of the kube-ipvs0 dummy device,
//     the IPVS virtual servers with their real servers, the ipset members,
//     and the iptables-restore payload. Upstream: the body of
//     Proxier.syncProxyRules and writeIptablesRules
//     (k8s.io/kubernetes/pkg/proxy/ipvs/proxier.go).
//  2. Diff (diff.go) compares a Desired state with the kernel's Actual
//     state and returns a Plan: the list of Ops that
//     brings the kernel there, each printable as the command a person would
//     type (`ipvsadm -a -t 10.96.0.10:53 -r 10.244.1.5:53 -m -w 1`). Real
//     servers that should go away drain first, as upstream's
//     GracefulTerminationManager does (graceful_termination.go).
//  3. The kernel (subpackage kernel): IPVS through github.com/moby/ipvs,
//     links and ipsets through github.com/vishvananda/netlink, sysctls
//     through /proc/sys; kernel/kerneltest fakes it for unit tests.
//     iptables goes through proxy/iptables' Runner.
//  4. Backend (backend.go) ties them into the proxy.Backend a sync loop
//     drives: NewBackend checks the kernel (IPVS, the scheduler, ipset) and
//     sets the sysctls and timeouts upstream's NewProxier sets. The Actual
//     state is read from the kernel (ReadActual) only on a full sync — the
//     first, the loop's periodic one (ForceFullSync) and the one after an
//     error; in between the Backend keeps what it wrote (written.go) and
//     re-reads only the destinations of virtual servers it drains, so a
//     sync sends the kernel requests in proportion to what changed, where
//     upstream reads every virtual server and its destinations each sync.
//     In memory too: between full syncs the Backend keeps the desired
//     state per service port (state.go), and for a model.Tracker's
//     snapshot (model.Snapshot.StablePointers) recomputes only the service
//     ports whose pointer changed and diffs only what they touched plus
//     the virtual servers it drains (diff_partial.go), with the same result
//     as Compute and Diff over everything.
//
// Cleanup removes what both kube-proxy modes leave in a node (kube-proxy
// --cleanup), and FindLeftovers lists it.
//
// A Backend is the proxier of one IP family (Options.Family): a
// dual-stack node runs an IPv4 and an IPv6 one side by side, as upstream's
// metaproxier does, sharing the IPVS table and kube-ipvs0 while each keeps
// to its family's virtual servers and addresses, its ipsets (KUBE-6-* of
// family inet6 for IPv6) and its iptables or ip6tables rules (family.go).
//
// Left out compared with upstream: the service health check servers (the
// KUBE-HEALTH-CHECK-NODE-PORT set is filled, nothing listens),
// topology-aware routing, and nodePortAddresses "primary". (The conntrack
// cleanup of stale UDP flows is the sync loop's, for every mode:
// proxy/staleudp.go.)
package ipvs
