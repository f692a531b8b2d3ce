package upstream

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	upstreamnft "k8s.io/kubernetes/pkg/proxy/nftables"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

// UpstreamNFTables runs upstream kube-proxy's nftables proxier of c's
// options' family (ForFamily; IPv4 when unset) on c: the
// real NewProxier, its nftables interface swapped for knftables.NewFake
// before the first sync (NewProxier builds a real one with knftables.New,
// which is why this runs in the tests' own network namespace; nothing is
// written through it), the objects fed through the informer handlers, then
// the Synced calls, whose last one runs the first (full) sync.
func UpstreamNFTables(c *Case) (*knftables.Fake, string, error) {
	klogMu.Lock()
	defer klogMu.Unlock()
	var log bytes.Buffer
	logger := funcr.New(func(prefix, args string) {
		fmt.Fprintln(&log, prefix, args)
	}, funcr.Options{Verbosity: 2})
	klog.SetLogger(logger)
	defer klog.ClearLogger()
	ctx := klog.NewContext(context.Background(), logger)

	detector := localDetector(c.Options)
	nodePortAddresses, err := nodePortCIDRs(c.Options)
	if err != nil {
		return nil, "", err
	}
	proxier, err := upstreamnft.NewProxier(ctx,
		c.Options.family(),
		30*time.Second, // syncPeriod
		0,              // minSyncPeriod
		c.Options.MasqueradeAll,
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
	fake := knftables.NewFake(nftFamily(c.Options), nftables.TableName)
	if err := setUnexported(proxier, "nftables", knftables.Interface(fake)); err != nil {
		return nil, log.String(), err
	}
	if len(c.Options.ServiceCIDRs) > 0 {
		proxier.OnServiceCIDRsChanged(c.Options.ServiceCIDRs)
	}
	if err := feed(proxier, c, log.String); err != nil {
		return fake, log.String(), err
	}
	return fake, log.String(), nil
}

// setUnexported sets the unexported field name of *obj to v. Upstream's
// NewProxier takes no knftables.Interface (its own tests build the struct
// inside the package); this is the one seam from outside.
func setUnexported(obj any, name string, v any) error {
	f := reflect.ValueOf(obj).Elem().FieldByName(name)
	if !f.IsValid() {
		return fmt.Errorf("upstream Proxier has no field %q any more", name)
	}
	val := reflect.ValueOf(v)
	if !val.Type().AssignableTo(f.Type()) {
		return fmt.Errorf("upstream Proxier.%s is %s, not %s", name, f.Type(), val.Type())
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(val)
	return nil
}

// SvclabNFTables runs svclab's first nftables sync for c in c's options'
// family: model.BuildFamily, then nftables.Syncer into a fresh
// knftables.Fake of the family's table (ip or ip6 kube-proxy).
func SvclabNFTables(c *Case) (*knftables.Fake, error) {
	opts, err := SvclabNFTOptions(c.Options)
	if err != nil {
		return nil, err
	}
	r, err := nftables.NewRenderer(opts)
	if err != nil {
		return nil, err
	}
	fake := knftables.NewFake(nftFamily(c.Options), nftables.TableName)
	s := &nftables.Syncer{NFT: fake, Renderer: r}
	snap := model.BuildFamily(c.Options.family(), c.Services, c.EndpointSlices, c.Node.Name)
	if _, err := s.Sync(context.Background(), snap); err != nil {
		return fake, fmt.Errorf("svclab sync: %w", err)
	}
	return fake, nil
}

// SvclabNFTOptions are the nftables renderer options equivalent to o.
func SvclabNFTOptions(o Options) (nftables.Options, error) {
	opts := nftables.Options{
		Family:        o.family(),
		MasqueradeAll: o.MasqueradeAll,
		MasqueradeBit: o.masqueradeBit(),
		NodeIP:        netip.MustParseAddr(o.NodeIP),
	}
	switch {
	case o.InterfaceNamePrefix != "":
		opts.LocalDetector = nftables.DetectLocalByInterfaceNamePrefix(o.InterfaceNamePrefix)
	case o.BridgeInterface != "":
		opts.LocalDetector = nftables.DetectLocalByBridgeInterface(o.BridgeInterface)
	case o.ClusterCIDR != "":
		p, err := netip.ParsePrefix(o.ClusterCIDR)
		if err != nil {
			return opts, fmt.Errorf("options.clusterCIDR: %w", err)
		}
		opts.LocalDetector = nftables.DetectLocalByCIDR(p)
	}
	for _, s := range o.ServiceCIDRs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return opts, fmt.Errorf("options.serviceCIDRs: %w", err)
		}
		if o.ofFamily(p.Addr()) {
			opts.ServiceCIDRs = append(opts.ServiceCIDRs, p)
		}
	}
	var err error
	opts.NodePortCIDRs, opts.NodePortAddresses, err = nodePortOptions(o)
	return opts, err
}

// nftFamily is the knftables family of o's table.
func nftFamily(o Options) knftables.Family {
	if o.isIPv6() {
		return knftables.IPv6Family
	}
	return knftables.IPv4Family
}

// NormalizeNFTDump sorts each run of "add element" lines of a
// knftables.Fake Dump. It is the one normalization of the nftables
// comparison, and unavoidable: the fake keeps a set's or map's elements in
// insertion order, and upstream inserts them while it walks its service
// map (and its node-port addresses) in Go map order, which changes from
// run to run. Everything else — tables, chains, sets, maps, their types,
// flags, comments, every rule in chain order — is compared as dumped. (The
// tests also accept a table upstream leaves on another run, for keys two
// services claim: someUpstreamRunEqual in nftables_test.go.)
func NormalizeNFTDump(dump string) string {
	lines := strings.Split(dump, "\n")
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "add element ") {
			i++
			continue
		}
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], "add element ") {
			j++
		}
		slices.Sort(lines[i:j])
		i = j
	}
	return strings.Join(lines, "\n")
}
