package proxy

import (
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/iptables"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/model"
)

// iptablesBackend is iptables mode: the renderer's payload, applied with
// one iptables-restore per sync through the exec runner.
type iptablesBackend struct {
	runner   iptablesRunner
	describe string
	renderer *iptables.Renderer
	log      *slog.Logger
}

// iptablesRunner is what the iptables mode asks of iptables: restores,
// saves, jumps and the canary chain (an ExecRunner, or a fake in tests).
type iptablesRunner interface {
	iptkernel.Runner
	iptables.CanaryRunner
}

// newIPTablesBackend is iptables mode for one IP family: iptables for
// IPv4, ip6tables for IPv6.
func newIPTablesBackend(cfg config.Config, backend string, family corev1.IPFamily, np nodePortSelection, log *slog.Logger) (Backend, error) {
	b, err := iptkernel.ParseBackend(backend)
	if err != nil {
		return nil, err
	}
	eo := iptkernel.ExecOptions{Backend: b}
	if family == corev1.IPv6Protocol {
		eo.Family = family
	}
	runner, err := iptkernel.NewExecRunner(eo)
	if err != nil {
		return nil, err
	}
	return startIPTablesBackend(cfg, family, np, runner, runner.Version().String(), procSys{}, log)
}

// startIPTablesBackend is newIPTablesBackend over a given runner of
// family's iptables and sysctls (fakes in tests); describe is what
// Describe says. Node ports answer where np says (every local address
// unless nodePortAddresses names CIDRs of the family).
func startIPTablesBackend(cfg config.Config, family corev1.IPFamily, np nodePortSelection, runner iptablesRunner, describe string, sys sysctls, log *slog.Logger) (Backend, error) {
	opts, err := setUpIPTablesKernel(cfg, family, sys, log)
	if err != nil {
		return nil, err
	}
	opts.NodePortCIDRs, opts.NodePortAddresses = np.CIDRs, np.Addresses
	opts.RandomFully = runner.HasRandomFully()
	renderer, err := iptables.NewRenderer(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	return &iptablesBackend{runner: runner, describe: describe, renderer: renderer, log: log}, nil
}

func (b *iptablesBackend) Mode() string { return string(config.ModeIPTables) }

func (b *iptablesBackend) Describe() string { return b.describe }

// ForceFullSync implements FullSyncer.
func (b *iptablesBackend) ForceFullSync() { b.renderer.Reset() }

// CanaryMissing implements Canaried: KUBE-PROXY-CANARY in mangle, the
// first canary table (one exec per check, as upstream). While the next
// sync is a full one anyway (before the first, after a failure or a
// forced resync) there is nothing to learn and nothing runs: that sync
// puts the canary back in every table (upstream's monitor likewise
// creates the canaries before its first check).
func (b *iptablesBackend) CanaryMissing() (bool, error) {
	if b.renderer.NeedsFullSync() {
		return false, nil
	}
	return iptables.CanaryMissing(b.runner)
}

func (b *iptablesBackend) Sync(snap *model.Snapshot) (SyncStats, error) {
	if b.renderer.NeedsFullSync() {
		// A full sync puts the canary back first: rules restored after a
		// flush are then watched again.
		if err := iptables.EnsureCanary(b.runner); err != nil {
			b.renderer.Reset()
			return SyncStats{}, err
		}
	}
	res, err := iptables.Sync(b.runner, b.renderer, snap)
	if err != nil {
		var rerr *iptkernel.RestoreError
		if errors.As(err, &rerr) {
			b.log.Error("iptables-restore rejected the payload; previous rules kept", "offending", rerr.OffendingLine())
		}
		return SyncStats{}, err
	}
	return SyncStats{Full: res.FullSync, ServicePorts: res.ServicePorts, Endpoints: res.Endpoints, Bytes: res.Bytes()}, nil
}
