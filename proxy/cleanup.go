package proxy

import (
	"context"
	"errors"

	"github.com/svclab/svclab/proxy/nftables"
)

// Cleanup removes, in the current network namespace, what kube-proxy's
// modes create in both IP families — the iptables and ipvs modes' chains
// and jumps in iptables and ip6tables, the IPVS virtual servers on
// kube-ipvs0, kube-ipvs0 itself, the ipvs mode's ipsets, and the nftables
// mode's tables (ip and ip6 kube-proxy) — and nothing else, like
// `kube-proxy --cleanup`.
func Cleanup(iptablesBackend string) error {
	return errors.Join(cleanUpIPTablesBasedModes(iptablesBackend), nftables.CleanupKernel(context.Background()))
}
