package proxy

import (
	"context"
	"errors"
	"log/slog"

	corev1 "k8s.io/api/core/v1"

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

// cleanUpIPTablesBasedModes is ipvs.Cleanup in the current namespace for
// both IP families, as upstream's CleanupLeftovers with its best-effort
// iptables of each family: the KUBE-* chains of both iptables-based modes
// in iptables and in ip6tables, the IPVS services (of either family),
// kube-ipvs0 and the ipsets. A family whose iptables binaries do not run
// is skipped (upstream's NewBestEffort leaves it out), unless neither runs.
func cleanUpIPTablesBasedModes(iptablesBackend string) error {
	backend, err := iptkernel.ParseBackend(iptablesBackend)
	if err != nil {
		return err
	}
	var runners []iptkernel.Runner
	var errs []error
	for _, f := range []corev1.IPFamily{"", corev1.IPv6Protocol} {
		ipt, err := iptkernel.NewExecRunner(iptkernel.ExecOptions{Backend: backend, Family: f})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		runners = append(runners, ipt)
	}
	if len(runners) == 0 {
		return errors.Join(errs...)
	}
	k, err := kernel.Open("")
	if err != nil {
		return err
	}
	defer k.Close()
	// One call with both families' iptables: the KUBE-6-* ipsets can be
	// destroyed only once the ip6tables rules using them are gone.
	return ipvs.Cleanup(k, runners...)
}
