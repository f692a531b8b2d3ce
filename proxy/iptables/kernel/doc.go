// Package kernel is the narrow interface between svclab's iptables-based
// modes and the kernel's iptables, as proxy/ipvs/kernel is for IPVS: the
// Runner a sync needs (iptables-restore --noflush, iptables-save, the jump
// rules from built-in chains) and ExecRunner, which runs the iptables
// binaries of the legacy or the nf_tables backend, in the node's network
// namespace or another. A rejected payload is a *RestoreError naming the
// line iptables-restore blamed.
//
// Both proxy/iptables (the iptables mode) and proxy/ipvs (whose iptables
// rules go through the same binaries) import it; it imports neither. The
// package proxy/iptables/iptablestest holds a fake Runner. Upstream:
// k8s.io/kubernetes/pkg/util/iptables.
package kernel
