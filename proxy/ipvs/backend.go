package ipvs

import (
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/config"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/iptables/localtraffic"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/model"
)

// Mode is the mode's name, as /proxyMode answers.
const Mode = "ipvs"

// Backend is the IPVS proxy mode: each Sync computes the desired state,
// reads the kernel's, and applies the difference. It is not safe for
// concurrent use; a sync loop calls it from one goroutine.
type Backend struct {
	// k is the kernel, counting the calls made to it (SyncResult.Kernel).
	k        *kernel.Counting
	ipt      iptkernel.Runner
	opts     Options
	settings Settings
	release  string
	log      *slog.Logger
	close    func()

	// applied is the iptables payload the kernel holds; nil forces the
	// next sync to ensure the jump rules and restore (a full sync).
	applied []byte
	// written is what the kernel holds as far as the IPVS mode is
	// concerned: read by the last full sync and kept up to date with every
	// op applied since (written.go). nil forces the next sync to read the
	// kernel in full; it is dropped with applied, so a sync is either full
	// in both or in neither.
	written *Actual
	// state is the desired state of the last sync, kept so that a
	// partial sync recomputes only the service ports that changed
	// (state.go); reset with written.
	state desiredState
	// draining are the virtual servers of written with a destination
	// being drained, which a partial sync looks at besides what changed.
	draining draining
}

// SyncResult describes one Sync.
type SyncResult struct {
	// Full is true when the kernel was read in full and the iptables
	// jumps and payload were rewritten regardless of what the kernel was
	// believed to hold; on a partial sync the IPVS mode compares with what
	// it wrote before.
	Full         bool
	ServicePorts int
	Endpoints    int
	// Bytes is the size of the iptables payload written (0 when it was
	// unchanged and not rewritten).
	Bytes int
	// Ops is how many kernel changes were made; Plan lists them.
	Ops  int
	Plan Plan
	// Kernel counts the calls this sync made to the kernel, each about one
	// netlink request (kernel.Calls says which are more), failed ones
	// included.
	Kernel kernel.Calls
}

// NewBackend opens the kernel of the calling process's network namespace
// and returns the IPVS mode's IPv4 proxier for cfg. iptablesBackend is "",
// "legacy" or "nft" as for iptables mode. It fails with an error naming
// the problem when the kernel has no IPVS or no ipset support, when the
// scheduler is missing, or when a setting is unusable.
func NewBackend(cfg config.Config, iptablesBackend string, log *slog.Logger) (*Backend, error) {
	return NewBackendFor(cfg, corev1.IPv4Protocol, iptablesBackend, log)
}

// NewBackendFor is NewBackend for the proxier of family: the IPv6 one
// writes its rules with ip6tables-restore. A dual-stack node runs one of
// each, as upstream's metaproxier does.
func NewBackendFor(cfg config.Config, family corev1.IPFamily, iptablesBackend string, log *slog.Logger) (*Backend, error) {
	opts, err := OptionsFromConfigFor(cfg, family)
	if err != nil {
		return nil, err
	}
	b, err := iptkernel.ParseBackend(iptablesBackend)
	if err != nil {
		return nil, err
	}
	k, err := kernel.Open("")
	if err != nil {
		return nil, fmt.Errorf("ipvs mode: %w", err)
	}
	if err := k.IPVSAvailable(); err != nil {
		k.Close()
		return nil, fmt.Errorf("ipvs mode: kernel %s: %w", kernel.Release(), err)
	}
	runner, err := iptkernel.NewExecRunner(iptkernel.ExecOptions{Backend: b, Family: opts.Family})
	if err != nil {
		k.Close()
		return nil, fmt.Errorf("ipvs mode: %w", err)
	}
	be, err := New(k, runner, opts, log)
	if err != nil {
		k.Close()
		if source := cfg.Source; source != "" {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		return nil, err
	}
	be.close = k.Close
	return be, nil
}

// New returns the IPVS mode over any kernel and iptables runner (the real
// ones, or fakes in tests). It checks the kernel and sets it up as
// upstream's NewProxier does; see CheckScheduler and SetupKernel.
func New(k kernel.Interface, ipt iptkernel.Runner, opts Options, log *slog.Logger) (*Backend, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if _, err := k.VirtualServers(); err != nil {
		return nil, fmt.Errorf("ipvs mode: %w", err)
	}
	if _, err := k.ListSets(); err != nil {
		return nil, fmt.Errorf("ipvs mode needs ipset support in the kernel (CONFIG_IP_SET): %w", err)
	}
	if err := CheckScheduler(k, opts.Scheduler); err != nil {
		return nil, err
	}
	release := opts.KernelRelease
	if release == "" {
		release = kernel.Release()
	}
	if err := SetupKernel(k, opts, release); err != nil {
		return nil, fmt.Errorf("ipvs mode: %w", err)
	}
	s := Settings{
		Family:        opts.Family,
		Scheduler:     opts.Scheduler,
		NodePortCIDRs: opts.NodePortCIDRs,
		NodeIP:        opts.NodeIP,
		MasqueradeBit: opts.MasqueradeBit,
		MasqueradeAll: opts.MasqueradeAll,
		RandomFully:   ipt.HasRandomFully(),
	}
	if opts.ClusterCIDR.IsValid() {
		d, err := localtraffic.ByCIDR(opts.ClusterCIDR.String())
		if err != nil {
			return nil, err
		}
		s.LocalDetector = d
	}
	return &Backend{k: kernel.Count(k), ipt: ipt, opts: opts, settings: s, release: release, log: log}, nil
}

// Mode implements proxy.Backend.
func (b *Backend) Mode() string { return Mode }

// Describe implements proxy.Backend: "IPVS (kernel 6.1.0-18-amd64,
// scheduler rr)", "IPVS (IPv6, kernel ...)" for the IPv6 proxier.
func (b *Backend) Describe() string {
	family := ""
	if isIPv6(b.settings.Family) {
		family = "IPv6, "
	}
	return fmt.Sprintf("IPVS (%skernel %s, scheduler %s)", family, b.release, b.settings.scheduler())
}

// Family is the IP family of the proxier: IPv4 or IPv6.
func (b *Backend) Family() corev1.IPFamily {
	if isIPv6(b.settings.Family) {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

// Close releases the kernel handles NewBackend opened.
func (b *Backend) Close() {
	if b.close != nil {
		b.close()
	}
}

// Desired computes what a sync of snap would ask for, with the node's
// current addresses, without changing anything.
func (b *Backend) Desired(snap *model.Snapshot) (*Desired, error) {
	s, err := b.settingsNow()
	if err != nil {
		return nil, err
	}
	return Compute(snap, s), nil
}

// settingsNow are the settings with the node's current addresses.
func (b *Backend) settingsNow() (Settings, error) {
	all, err := b.k.NodeAddresses(DummyDevice)
	if err != nil {
		return Settings{}, err
	}
	addrs := ofFamily(b.settings.Family, all)
	s := b.settings
	s.NodeAddresses = addrs
	if !s.NodeIP.IsValid() && len(addrs) > 0 {
		s.NodeIP = addrs[0]
	}
	return s, nil
}

// ForceFullSync makes the next Sync read the kernel in full and rewrite
// the iptables rules, whatever it believes the kernel holds, and compute
// the desired state from every service port (the loop's periodic full
// sync: proxy.FullSyncer).
func (b *Backend) ForceFullSync() {
	b.applied, b.written, b.draining = nil, nil, nil
	b.state.reset()
}

// Sync makes the kernel match snap, in these steps:
//
//  1. compute the desired state (reading the node's addresses, as
//     upstream does in every sync): on a partial sync of a Tracker's
//     snapshot, only the service ports that changed (state.go);
//  2. know the kernel's: on a full sync read it all, otherwise take what
//     was written before and re-read only the virtual servers whose
//     destinations are being drained or are about to be;
//  3. diff, and apply the plan;
//  4. record what was applied, for the next sync to start from.
//
// Any error drops what was recorded, so the next Sync is a full one.
func (b *Backend) Sync(snap *model.Snapshot) (SyncResult, error) {
	b.k.TakeCalls()
	res, err := b.sync(snap)
	res.Kernel = b.k.TakeCalls()
	if err != nil {
		b.ForceFullSync()
	}
	return res, err
}

func (b *Backend) sync(snap *model.Snapshot) (SyncResult, error) {
	s, err := b.settingsNow()
	if err != nil {
		return SyncResult{}, fmt.Errorf("ipvs sync: %w", err)
	}
	full := b.written == nil
	d, ch := b.state.update(snap, s, !full && b.applied != nil)
	a, plan, looked, err := b.plan(d, ch)
	if err != nil {
		return SyncResult{Full: full}, fmt.Errorf("ipvs sync: reading the kernel: %w", err)
	}
	for _, op := range plan {
		b.log.Debug("ipvs sync", "op", op.String())
	}
	res, err := Apply(b.k, b.ipt, plan)
	out := SyncResult{Full: full, ServicePorts: d.ServicePorts, Endpoints: d.Endpoints, Bytes: res.Restored, Ops: res.Ops, Plan: plan}
	if err != nil {
		var rerr *iptkernel.RestoreError
		if errors.As(err, &rerr) {
			b.log.Error("iptables-restore rejected the ipvs payload", "offending", rerr.OffendingLine())
		}
		return out, fmt.Errorf("ipvs sync of %d service ports: %w", d.ServicePorts, err)
	}
	a.record(plan, d)
	b.written, b.applied = a, d.IPTables
	if b.state.patchable() {
		b.draining = b.draining.update(a, looked, ch)
	} else {
		b.draining = nil // no partial sync next: nothing to keep
	}
	return out, nil
}

// plan knows the kernel's state and diffs d with it. When d was patched
// (ch not nil) only what ch touched and the draining virtual servers are
// read again and diffed (diffPartial); otherwise all of d is. looked are
// the virtual servers of d it looked at.
func (b *Backend) plan(d *Desired, ch *change) (a *Actual, plan Plan, looked []DesiredVirtualServer, err error) {
	opts := DiffOptions{ExcludeCIDRs: b.opts.ExcludeCIDRs, AppliedIPTables: b.applied}
	if ch == nil {
		if a, err = b.kernelState(d); err != nil {
			return nil, nil, nil, err
		}
		return a, Diff(d, a, opts), d.VirtualServers, nil
	}
	a, looked = b.written, b.state.candidates(ch, b.draining)
	if err := a.refreshDrainingOf(b.k, looked); err != nil {
		return nil, nil, nil, err
	}
	return a, b.state.diffPartial(d, a, opts, ch, looked), looked, nil
}

// kernelState is what Diff compares d with: the whole kernel read on a
// full sync, else what was written before with the connection counts of
// the destinations that may be drained read again.
func (b *Backend) kernelState(d *Desired) (*Actual, error) {
	if b.written == nil {
		return ReadActualOf(b.k, b.settings.Family)
	}
	if err := b.written.refreshDraining(b.k, d); err != nil {
		return nil, err
	}
	return b.written, nil
}
