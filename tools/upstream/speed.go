package upstream

import (
	"context"
	"fmt"
	"io"
	"net"
	"reflect"
	"time"
	"unsafe"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/events"
	sysctltest "k8s.io/component-helpers/node/util/sysctl/testing"
	"k8s.io/klog/v2"
	upstreamiptables "k8s.io/kubernetes/pkg/proxy/iptables"
	upstreamnft "k8s.io/kubernetes/pkg/proxy/nftables"
	proxyutil "k8s.io/kubernetes/pkg/proxy/util"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	iptablestest "k8s.io/kubernetes/pkg/util/iptables/testing"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// speedOptions are the proxies' settings in the speed comparison: a pod
// network, this namespace's node IP, everything else upstream's default.
var speedOptions = Options{ClusterCIDR: modeltest.ClusterCIDR, NodeIP: DefaultNodeIP}

// recordingIPTables is upstream's FakeIPTables whose iptables-restore only
// records the payload's size: the proxier's own work is timed, not the
// fake's parsing of what it wrote.
type recordingIPTables struct {
	*iptablestest.FakeIPTables
	bytes int
}

func (r *recordingIPTables) RestoreAll(data []byte, _ utiliptables.FlushFlag, _ utiliptables.RestoreCountersFlag) error {
	r.bytes = len(data)
	return nil
}

// recordingRunner is svclab's kernel.Runner that records the payload's
// size, the counterpart of recordingIPTables.
type recordingRunner struct{ bytes int }

func (r *recordingRunner) Restore(payload []byte) error { r.bytes = len(payload); return nil }

// RestoreStream records the size of the payload svclab's ExecRunner would
// stream to iptables-restore, as upstream's recording fake records its
// buffer's: neither is parsed, neither side's bytes are copied again
// (io.Discard takes each part as it is).
func (r *recordingRunner) RestoreStream(p kernel.StreamedPayload) error {
	n, err := p.WriteTo(io.Discard)
	r.bytes = int(n)
	return err
}
func (r *recordingRunner) Save(string) ([]byte, error)      { return nil, nil }
func (r *recordingRunner) EnsureJump(kernel.JumpRule) error { return nil }
func (r *recordingRunner) HasRandomFully() bool             { return true }

// upstreamIPTablesProxier is upstream's real iptables proxier behind a
// recordingIPTables; nothing synced yet.
type upstreamIPTablesProxier struct {
	upstreamEvents
	ipt *recordingIPTables
}

func quietContext() context.Context {
	return klog.NewContext(context.Background(), logr.Discard())
}

func newUpstreamIPTables() (*upstreamIPTablesProxier, error) {
	ipt := &recordingIPTables{FakeIPTables: iptablestest.NewFake().SetHasRandomFully(true)}
	p, err := upstreamiptables.NewProxier(quietContext(), "IPv4", ipt, sysctltest.NewFake(),
		30*time.Second, 0, false, true, 14,
		proxyutil.NewDetectLocalByCIDR(speedOptions.ClusterCIDR), modeltest.NodeName,
		net.ParseIP(speedOptions.NodeIP), events.NewFakeRecorder(100), nil, nil, false)
	if err != nil {
		return nil, fmt.Errorf("upstream iptables NewProxier: %w", err)
	}
	return &upstreamIPTablesProxier{upstreamEvents{p}, ipt}, nil
}

// upstreamEvents drives either upstream proxier through its informer
// handlers.
type upstreamEvents struct{ p upstreamProxier }

// upstreamProxier is what upstreamEvents calls: the handlers feed uses,
// and the update one.
type upstreamProxier interface {
	caseHandler
	OnEndpointSliceUpdate(old, new *discoveryv1.EndpointSlice)
}

// cold feeds every object through the informer handlers and runs the
// first sync (the Synced calls).
func (u upstreamEvents) cold(svcs []*corev1.Service, slices []*discoveryv1.EndpointSlice) {
	for _, s := range svcs {
		u.p.OnServiceAdd(s)
	}
	for _, s := range slices {
		u.p.OnEndpointSliceAdd(s)
	}
	u.p.OnServiceSynced()
	u.p.OnEndpointSlicesSynced()
}

// full is upstream's forced full sync (forceSyncProxyRules: needFullSync,
// then syncProxyRules, which OnEndpointSlicesSynced calls directly).
func (u upstreamEvents) full() error {
	if err := setField(u.p, "needFullSync", true); err != nil {
		return err
	}
	u.p.OnEndpointSlicesSynced()
	return nil
}

// changed is one EndpointSlice update, event to payload.
func (u upstreamEvents) changed(old, new *discoveryv1.EndpointSlice) {
	u.p.OnEndpointSliceUpdate(old, new)
	u.p.OnEndpointSlicesSynced()
}

// svclabPath is svclab's whole iptables path: the source's change goes
// into model.Tracker (as the proxy's loop does), the snapshot into the
// renderer, the payload into a recordingRunner.
type svclabPath struct {
	tracker  *model.Tracker
	renderer *iptables.Renderer
	kernel   *recordingRunner
}

func newSvclabPath() (*svclabPath, error) {
	opts, err := SvclabOptions(speedOptions)
	if err != nil {
		return nil, err
	}
	opts.RandomFully = true
	r, err := iptables.NewRenderer(opts)
	if err != nil {
		return nil, err
	}
	return &svclabPath{tracker: model.NewTracker(corev1.IPv4Protocol, modeltest.NodeName), renderer: r, kernel: &recordingRunner{}}, nil
}

func (s *svclabPath) sync() error {
	_, err := iptables.Sync(s.kernel, s.renderer, s.tracker.Snapshot())
	return err
}

// cold is the first sync: the objects as the informers' first events,
// then one sync.
func (s *svclabPath) cold(svcs []*corev1.Service, slices []*discoveryv1.EndpointSlice) error {
	for _, o := range svcs {
		s.tracker.SetService(o)
	}
	for _, o := range slices {
		s.tracker.SetEndpointSlice(o)
	}
	return s.sync()
}

// full is the forced full sync (the loop's ForceFullSync) from the
// tracker's state: every rule rewritten, from the fragments cached for
// service ports that did not change (the canary's and a failed sync's
// full sync, as upstream's forceSyncProxyRules).
func (s *svclabPath) full() error {
	s.renderer.Reset()
	return s.sync()
}

// resync is svclab's hourly full resync (and the one after the source
// lost changes): the loop lists everything again into the tracker
// (Replace: every service port rebuilt, new pointers, so the renderer
// compares each by content), then the forced full sync. Upstream's full
// sync has no such step: it rewrites the rules from its change trackers'
// maps as they are.
func (s *svclabPath) resync(svcs []*corev1.Service, slices []*discoveryv1.EndpointSlice) error {
	s.tracker.Replace(svcs, slices)
	return s.full()
}

// changed is one EndpointSlice update, event to payload.
func (s *svclabPath) changed(new *discoveryv1.EndpointSlice) error {
	s.tracker.SetEndpointSlice(new)
	return s.sync()
}

// upstreamNFTablesProxier is upstream's real nftables proxier with its
// nftables interface swapped for knftables.Fake.
type upstreamNFTablesProxier struct{ upstreamEvents }

func newUpstreamNFTables() (*upstreamNFTablesProxier, error) {
	p, err := upstreamnft.NewProxier(quietContext(), corev1.IPv4Protocol, 30*time.Second, 0, false, 14,
		proxyutil.NewDetectLocalByCIDR(speedOptions.ClusterCIDR), modeltest.NodeName,
		net.ParseIP(speedOptions.NodeIP), events.NewFakeRecorder(100), nil, nil, false)
	if err != nil {
		return nil, fmt.Errorf("upstream nftables NewProxier: %w", err)
	}
	fake := knftables.NewFake(knftables.IPv4Family, "kube-proxy")
	if err := setField(p, "nftables", knftables.Interface(fake)); err != nil {
		return nil, err
	}
	return &upstreamNFTablesProxier{upstreamEvents{p}}, nil
}

// setField sets the unexported field name of the struct p points to: the
// only way to reach upstream's forceSyncProxyRules flag and to give its
// nftables proxier a fake (its NewProxier builds a real knftables).
func setField(p any, name string, v any) error {
	f := reflect.ValueOf(p).Elem().FieldByName(name)
	if !f.IsValid() {
		return fmt.Errorf("%T has no field %s", p, name)
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(v))
	return nil
}
