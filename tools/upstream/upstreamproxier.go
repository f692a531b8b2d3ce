package upstream

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/events"
	sysctltest "k8s.io/component-helpers/node/util/sysctl/testing"
	"k8s.io/klog/v2"
	upstreamiptables "k8s.io/kubernetes/pkg/proxy/iptables"
	proxyutil "k8s.io/kubernetes/pkg/proxy/util"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	iptablestest "k8s.io/kubernetes/pkg/util/iptables/testing"
)

// sysctl names upstream reads (pkg/proxy/iptables).
const (
	sysctlRouteLocalnet         = "net/ipv4/conf/all/route_localnet"
	sysctlNFConntrackTCPLiberal = "net/netfilter/nf_conntrack_tcp_be_liberal"
)

// klogMu serializes upstream runs: klog's logger is process-wide.
var klogMu sync.Mutex

// UpstreamTables runs upstream kube-proxy's iptables proxier of c's
// options' family (ForFamily; IPv4 when unset) on c: the real NewProxier
// behind upstream's FakeIPTables of that family, the objects fed through the
// informer handlers, then the Synced calls, whose last one runs the first
// (full) sync. It returns the fake's tables and upstream's log.
//
// NewProxier reads this host's interface addresses (for
// --nodeport-addresses), may create nfacct counters and cleans conntrack
// entries: run it in a network namespace of its own (see the tests'
// TestMain).
func UpstreamTables(c *Case) (*iptablestest.FakeIPTables, string, error) {
	klogMu.Lock()
	defer klogMu.Unlock()
	var log bytes.Buffer
	logger := funcr.New(func(prefix, args string) {
		fmt.Fprintln(&log, prefix, args)
	}, funcr.Options{Verbosity: 2})
	klog.SetLogger(logger)
	defer klog.ClearLogger()
	ctx := klog.NewContext(context.Background(), logger)

	fake := newFakeIPTables(c.Options)
	sysctl := sysctltest.NewFake()
	if c.Options.ConntrackTCPBeLiberal {
		sysctl.Settings[sysctlNFConntrackTCPLiberal] = 1
	}
	detector := localDetector(c.Options)
	nodePortAddresses, err := nodePortCIDRs(c.Options)
	if err != nil {
		return nil, "", err
	}
	proxier, err := upstreamiptables.NewProxier(ctx,
		c.Options.family(),
		fake,
		sysctl,
		30*time.Second, // syncPeriod
		0,              // minSyncPeriod
		c.Options.MasqueradeAll,
		c.Options.localhostNodePorts(),
		c.Options.masqueradeBit(),
		detector,
		c.Node.Name,
		net.ParseIP(c.Options.NodeIP),
		events.NewFakeRecorder(100),
		nil, // healthzServer
		nodePortAddresses,
		false, // initOnly
	)
	if err != nil {
		return nil, log.String(), fmt.Errorf("upstream NewProxier: %w", err)
	}
	if err := feed(proxier, c, log.String); err != nil {
		return fake, log.String(), err
	}
	return fake, log.String(), nil
}

// localDetector is the local-traffic detector the case's options name,
// as kube-proxy's server picks it (none: no detection).
func localDetector(o Options) proxyutil.LocalTrafficDetector {
	switch {
	case o.InterfaceNamePrefix != "":
		return proxyutil.NewDetectLocalByInterfaceNamePrefix(o.InterfaceNamePrefix)
	case o.BridgeInterface != "":
		return proxyutil.NewDetectLocalByBridgeInterface(o.BridgeInterface)
	case o.ClusterCIDR != "":
		return proxyutil.NewDetectLocalByCIDR(o.ClusterCIDR)
	}
	return proxyutil.NewNoOpLocalDetector()
}

// caseHandler is what feed calls on an upstream proxier (iptables or
// nftables): its informer event handlers.
type caseHandler interface {
	OnTopologyChange(map[string]string)
	OnServiceAdd(*corev1.Service)
	OnEndpointSliceAdd(*discoveryv1.EndpointSlice)
	OnServiceSynced()
	OnEndpointSlicesSynced()
}

// feed gives an upstream proxier the case's node labels, Services and
// EndpointSlices as its informers would, then both "synced" calls (the
// second runs the sync); a "Sync failed" in the proxier's log is the error.
func feed(p caseHandler, c *Case, log func() string) error {
	if c.Node.Labels != nil {
		p.OnTopologyChange(c.Node.Labels)
	}
	for _, s := range c.Services {
		p.OnServiceAdd(s.DeepCopy())
	}
	for _, s := range c.EndpointSlices {
		p.OnEndpointSliceAdd(s.DeepCopy())
	}
	p.OnServiceSynced()
	p.OnEndpointSlicesSynced()
	if strings.Contains(log(), "Sync failed") {
		return fmt.Errorf("upstream sync failed:\n%s", log())
	}
	return nil
}

// newFakeIPTables is upstream's fake iptables of o's family.
func newFakeIPTables(o Options) *iptablestest.FakeIPTables {
	fake := iptablestest.NewFake()
	if o.isIPv6() {
		fake = iptablestest.NewIPv6Fake()
	}
	return fake.SetHasRandomFully(!o.NoRandomFully)
}

// nodePortCIDRs resolves "primary" as kube-proxy's server does: this node's
// IP of the family as a /32 or /128.
func nodePortCIDRs(o Options) ([]string, error) {
	if len(o.NodePortAddresses) == 1 && o.NodePortAddresses[0] == "primary" {
		ip := netip.MustParseAddr(o.NodeIP)
		return []string{netip.PrefixFrom(ip, ip.BitLen()).String()}, nil
	}
	for _, s := range o.NodePortAddresses {
		if _, _, err := net.ParseCIDR(s); err != nil {
			return nil, fmt.Errorf("options.nodePortAddresses: %w", err)
		}
	}
	return o.NodePortAddresses, nil
}

// upstreamTables are the tables compared.
var comparedTables = []utiliptables.Table{utiliptables.TableFilter, utiliptables.TableNAT}
