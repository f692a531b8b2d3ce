package upstream

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/events"
	sysctltest "k8s.io/component-helpers/node/util/sysctl/testing"
	upstreamiptables "k8s.io/kubernetes/pkg/proxy/iptables"
	upstreamnft "k8s.io/kubernetes/pkg/proxy/nftables"
	proxyutil "k8s.io/kubernetes/pkg/proxy/util"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	utilexec "k8s.io/utils/exec"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
	"github.com/svclab/svclab/proxy/nftables"
)

// syncSide is one proxy of the sync benchmark, programming the real kernel
// of the namespace its process runs in. Each call is the event and the
// proxy's sync that follows it, returning when the sync returned.
type syncSide interface {
	// cold feeds every object as the informers' first events and runs the
	// first sync.
	cold(svcs []*corev1.Service, slices []*discoveryv1.EndpointSlice) error
	// updateSlice is one EndpointSlice update, then a sync.
	updateSlice(old, new *discoveryv1.EndpointSlice) error
	// addService is a new Service and its slice, then a sync.
	addService(svc *corev1.Service, slice *discoveryv1.EndpointSlice) error
	// full is the hourly full resync with nothing changed.
	full() error
}

// Sides of the sync benchmark.
const (
	SideSvclab   = "svclab"
	SideUpstream = "upstream"
)

// Modes of the sync benchmark.
const (
	ModeIPTables = "iptables"
	ModeNFTables = "nftables"
)

// newSyncSide builds side's proxy of mode over the real kernel, counting
// what it execs into counts.
func newSyncSide(side, mode string, counts *execCounts) (syncSide, error) {
	switch {
	case side == SideSvclab && mode == ModeIPTables:
		return newSvclabIPTablesSide(counts)
	case side == SideSvclab && mode == ModeNFTables:
		return newSvclabNFTablesSide(counts)
	case side == SideUpstream && mode == ModeIPTables:
		return newUpstreamIPTablesSide(counts)
	case side == SideUpstream && mode == ModeNFTables:
		return newUpstreamNFTablesSide(counts)
	case side == SideSvclab && mode == ModeIPVS:
		return newSvclabIPVSSide(counts)
	case side == SideUpstream && mode == ModeIPVS:
		return newUpstreamIPVSSide(counts)
	}
	return nil, fmt.Errorf("side %q, mode %q: want svclab or upstream, iptables, nftables or ipvs", side, mode)
}

// svclabTrackerSide is what svclab's proxy loop does with events: the
// changed objects into model.Tracker, the snapshot (only changed services
// rebuilt) into the mode's sync; forceFull is the backend's
// ForceFullSync, which the loop calls before its hourly sync.
type svclabTrackerSide struct {
	tracker   *model.Tracker
	sync      func(*model.Snapshot) error
	forceFull func()
}

func newSvclabTrackerSide(sync func(*model.Snapshot) error, forceFull func()) *svclabTrackerSide {
	return &svclabTrackerSide{tracker: model.NewTracker(corev1.IPv4Protocol, modeltest.NodeName), sync: sync, forceFull: forceFull}
}

func (s *svclabTrackerSide) cold(svcs []*corev1.Service, slices []*discoveryv1.EndpointSlice) error {
	for _, o := range svcs {
		s.tracker.SetService(o)
	}
	for _, o := range slices {
		s.tracker.SetEndpointSlice(o)
	}
	return s.sync(s.tracker.Snapshot())
}

func (s *svclabTrackerSide) updateSlice(_, new *discoveryv1.EndpointSlice) error {
	s.tracker.SetEndpointSlice(new)
	return s.sync(s.tracker.Snapshot())
}

func (s *svclabTrackerSide) addService(svc *corev1.Service, slice *discoveryv1.EndpointSlice) error {
	s.tracker.SetService(svc)
	s.tracker.SetEndpointSlice(slice)
	return s.sync(s.tracker.Snapshot())
}

func (s *svclabTrackerSide) full() error {
	s.forceFull()
	return s.sync(s.tracker.Snapshot())
}

// newSvclabIPTablesSide is svclab's iptables mode as its backend runs it
// (proxy/iptablesmode.go): the canary on the first sync, then
// iptables.Sync through the exec runner (iptables-restore of what
// changed).
func newSvclabIPTablesSide(counts *execCounts) (syncSide, error) {
	runner, err := kernel.NewExecRunner(kernel.ExecOptions{Observe: countExecs(counts)})
	if err != nil {
		return nil, err
	}
	opts, err := SvclabOptions(speedOptions)
	if err != nil {
		return nil, err
	}
	opts.RandomFully = runner.HasRandomFully()
	renderer, err := iptables.NewRenderer(opts)
	if err != nil {
		return nil, err
	}
	return newSvclabTrackerSide(func(snap *model.Snapshot) error {
		if renderer.NeedsFullSync() {
			if err := iptables.EnsureCanary(runner); err != nil {
				return err
			}
		}
		_, err := iptables.Sync(runner, renderer, snap)
		return err
	}, renderer.Reset), nil
}

// newSvclabNFTablesSide is svclab's nftables mode as its backend runs it
// (proxy/nftablesmode.go): the table created at start, then
// nftables.Syncer through NetlinkFirst in this namespace — partial syncs
// as netlink batches (each batch's nf_tables messages counted as
// "netlink"), the rest through knftables (nft, counted per exec).
func newSvclabNFTablesSide(counts *execCounts) (syncSide, error) {
	real, err := nftables.OpenNFT(knftables.IPv4Family)
	if err != nil {
		return nil, err
	}
	nl := nftables.NewNetlinkFirst(countingNFT{real, counts}, knftables.IPv4Family)
	nl.Observe = func(messages int) { counts.add(netlinkCounted, messages) }
	nft := nl
	opts, err := SvclabNFTOptions(speedOptions)
	if err != nil {
		return nil, err
	}
	r, err := nftables.NewRenderer(opts)
	if err != nil {
		return nil, err
	}
	tx := nft.NewTransaction()
	tx.Add(&knftables.Table{Comment: ptr.To("rules for kube-proxy")})
	if err := nft.Run(context.Background(), tx); err != nil {
		return nil, fmt.Errorf("creating table ip %s: %w", nftables.TableName, err)
	}
	syncer := &nftables.Syncer{NFT: nft, Renderer: r}
	return newSvclabTrackerSide(func(snap *model.Snapshot) error {
		_, err := syncer.Sync(context.Background(), snap)
		return err
	}, syncer.ForceFull), nil
}

// upstreamSide drives an upstream proxier through its informer handlers;
// OnEndpointSlicesSynced runs syncProxyRules at once (the proxier's
// bounded-frequency runner is not started, so nothing else syncs).
type upstreamSide struct{ upstreamEvents }

func (u upstreamSide) cold(svcs []*corev1.Service, slices []*discoveryv1.EndpointSlice) error {
	u.upstreamEvents.cold(svcs, slices)
	return nil
}

func (u upstreamSide) updateSlice(old, new *discoveryv1.EndpointSlice) error {
	u.changed(old, new)
	return nil
}

func (u upstreamSide) addService(svc *corev1.Service, slice *discoveryv1.EndpointSlice) error {
	u.p.OnServiceAdd(svc)
	u.p.OnEndpointSliceAdd(slice)
	u.p.OnEndpointSlicesSynced()
	return nil
}

// full is forceSyncProxyRules: needFullSync set, then a sync.
func (u upstreamSide) full() error { return u.upstreamEvents.full() }

// newUpstreamIPTablesSide is upstream's iptables proxier with its real
// utiliptables runner (iptables, iptables-save, iptables-restore in this
// namespace), its exec layer counting. Upstream's settings are
// speedOptions', as in the other comparisons.
func newUpstreamIPTablesSide(counts *execCounts) (syncSide, error) {
	ipt := utiliptables.New(utiliptables.ProtocolIPv4)
	if err := setField(ipt, "exec", utilexec.Interface(countingExec{utilexec.New(), counts})); err != nil {
		return nil, err
	}
	p, err := upstreamiptables.NewProxier(quietContext(), "IPv4", ipt, sysctltest.NewFake(),
		30*time.Second, 0, false, true, 14,
		proxyutil.NewDetectLocalByCIDR(speedOptions.ClusterCIDR), modeltest.NodeName,
		net.ParseIP(speedOptions.NodeIP), events.NewFakeRecorder(100), nil, nil, false)
	if err != nil {
		return nil, fmt.Errorf("upstream iptables NewProxier: %w", err)
	}
	return upstreamSide{upstreamEvents{p}}, nil
}

// newUpstreamNFTablesSide is upstream's nftables proxier with the real
// knftables NewProxier made (nft in this namespace), wrapped to count.
func newUpstreamNFTablesSide(counts *execCounts) (syncSide, error) {
	p, err := upstreamnft.NewProxier(quietContext(), corev1.IPv4Protocol, 30*time.Second, 0, false, 14,
		proxyutil.NewDetectLocalByCIDR(speedOptions.ClusterCIDR), modeltest.NodeName,
		net.ParseIP(speedOptions.NodeIP), events.NewFakeRecorder(100), nil, nil, false)
	if err != nil {
		return nil, fmt.Errorf("upstream nftables NewProxier: %w", err)
	}
	real, err := getField[knftables.Interface](p, "nftables")
	if err != nil {
		return nil, err
	}
	if err := setField(p, "nftables", knftables.Interface(countingNFT{real, counts})); err != nil {
		return nil, err
	}
	return upstreamSide{upstreamEvents{p}}, nil
}

// getField reads the unexported field name of the struct p points to.
func getField[T any](p any, name string) (T, error) {
	var zero T
	f := reflect.ValueOf(p).Elem().FieldByName(name)
	if !f.IsValid() {
		return zero, fmt.Errorf("%T has no field %s", p, name)
	}
	v, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(T)
	if !ok {
		return zero, fmt.Errorf("%T.%s is %s", p, name, f.Type())
	}
	return v, nil
}
