package proxy

import (
	"context"
	"log/slog"

	"github.com/svclab/svclab/proxy/config"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/nftables"
)

// cleanUpOtherModes removes, when the proxy starts, the state of modes
// that cannot be the configured one's, as upstream's platformCleanup
// (cmd/kube-proxy/app/server_linux.go): starting in nftables mode removes
// the iptables and ipvs modes' chains, IPVS services, kube-ipvs0 and
// ipsets; starting in iptables or ipvs mode removes the kube-proxy
// nftables tables. The iptables-based modes leave each other's state (as
// upstream since 1.15; `svclab proxy --cleanup` removes it). Failures are
// logged and the proxy goes on, as upstream's.
func cleanUpOtherModes(mode config.Mode, iptablesBackend string, log *slog.Logger) {
	if mode == config.ModeNFTables {
		if err := cleanUpIPTablesBasedModes(iptablesBackend); err != nil {
			log.Error("removing the iptables and ipvs modes' leftovers failed", "err", err)
		}
		return
	}
	if err := nftables.CleanupKernel(context.Background()); err != nil {
		log.Error("removing the nftables mode's table failed", "err", err)
	}
}

// cleanUpIPTablesBasedModes is ipvs.Cleanup in the current namespace: the
// KUBE-* chains of both iptables-based modes, the IPVS services,
// kube-ipvs0 and the ipsets.
func cleanUpIPTablesBasedModes(iptablesBackend string) error {
	backend, err := iptkernel.ParseBackend(iptablesBackend)
	if err != nil {
		return err
	}
	ipt, err := iptkernel.NewExecRunner(iptkernel.ExecOptions{Backend: backend})
	if err != nil {
		return err
	}
	k, err := kernel.Open("")
	if err != nil {
		return err
	}
	defer k.Close()
	return ipvs.Cleanup(k, ipt)
}
