package upstream

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"

	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	iptablestest "k8s.io/kubernetes/pkg/util/iptables/testing"

	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/iptables/localtraffic"
	"github.com/svclab/svclab/proxy/model"
)

// fakeKernel is svclab's kernel.Runner over upstream's FakeIPTables, so
// that both proxies program the same fake kernel and are dumped the same
// way.
type fakeKernel struct {
	fake *iptablestest.FakeIPTables
}

var _ kernel.Runner = fakeKernel{}

// Restore is `iptables-restore --noflush --counters`, as svclab's
// ExecRunner runs it.
func (k fakeKernel) Restore(payload []byte) error {
	return k.fake.RestoreAll(payload, utiliptables.NoFlushTables, utiliptables.RestoreCounters)
}

func (k fakeKernel) Save(table string) ([]byte, error) {
	var b bytes.Buffer
	err := k.fake.SaveInto(utiliptables.Table(table), &b)
	return b.Bytes(), err
}

// EnsureJump creates the target chain and inserts the rule at the top of
// the built-in chain, as svclab's ExecRunner does (`iptables -N`, `-C`,
// `-I`).
func (k fakeKernel) EnsureJump(j kernel.JumpRule) error {
	if _, err := k.fake.EnsureChain(utiliptables.Table(j.Table), utiliptables.Chain(j.Target)); err != nil {
		return err
	}
	_, err := k.fake.EnsureRule(utiliptables.Prepend, utiliptables.Table(j.Table), utiliptables.Chain(j.Chain), j.Args()...)
	return err
}

func (k fakeKernel) HasRandomFully() bool { return k.fake.HasRandomFully() }

// SvclabTables runs svclab's first sync for c in c's options' family:
// model.BuildFamily, then iptables.Sync (jumps, then one iptables-restore)
// into a fresh upstream FakeIPTables of the family.
func SvclabTables(c *Case) (*iptablestest.FakeIPTables, error) {
	opts, err := SvclabOptions(c.Options)
	if err != nil {
		return nil, err
	}
	fake := fakeKernel{newFakeIPTables(c.Options)}
	opts.RandomFully = fake.HasRandomFully()
	renderer, err := iptables.NewRenderer(opts)
	if err != nil {
		return nil, err
	}
	snap := model.BuildFamily(c.Options.family(), c.Services, c.EndpointSlices, c.Node.Name)
	if _, err := iptables.Sync(fake, renderer, snap); err != nil {
		return fake.fake, fmt.Errorf("svclab sync: %w", err)
	}
	return fake.fake, nil
}

// SvclabOptions are the renderer options equivalent to o. nodePortAddresses
// are resolved against this host's interface addresses, as upstream's
// NodePortAddresses.GetNodeIPs does (svclab's renderer takes addresses, not
// CIDRs).
func SvclabOptions(o Options) (iptables.Options, error) {
	opts := iptables.Options{
		Family:                o.family(),
		ClusterCIDR:           o.ClusterCIDR,
		MasqueradeAll:         o.MasqueradeAll,
		MasqueradeBit:         o.masqueradeBit(),
		LocalhostNodePorts:    o.localhostNodePorts(),
		NodeIP:                netip.MustParseAddr(o.NodeIP),
		ConntrackTCPBeLiberal: o.ConntrackTCPBeLiberal,
	}
	switch {
	case o.InterfaceNamePrefix != "":
		opts.LocalDetector = localtraffic.ByInterfaceNamePrefix(o.InterfaceNamePrefix)
	case o.BridgeInterface != "":
		opts.LocalDetector = localtraffic.ByBridgeInterface(o.BridgeInterface)
	}
	var err error
	opts.NodePortCIDRs, opts.NodePortAddresses, err = nodePortOptions(o)
	return opts, err
}

// nodePortOptions resolves options.nodePortAddresses into the renderers'
// two fields: the CIDRs, and this host's addresses inside them.
func nodePortOptions(o Options) ([]netip.Prefix, []netip.Addr, error) {
	cidrs, err := nodePortCIDRs(o)
	if err != nil {
		return nil, nil, err
	}
	var prefixes []netip.Prefix
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, nil, fmt.Errorf("options.nodePortAddresses: %w", err)
		}
		prefixes = append(prefixes, p)
	}
	addrs, err := resolveNodePortAddresses(o, cidrs)
	return prefixes, addrs, err
}

// resolveNodePortAddresses gives the interface addresses of o's family
// inside the CIDRs of the family; nil when they match every address (none
// given, or a zero CIDR).
func resolveNodePortAddresses(o Options, cidrs []string) ([]netip.Addr, error) {
	var prefixes []netip.Prefix
	for _, s := range cidrs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, err
		}
		if !o.ofFamily(p.Addr()) {
			continue
		}
		if p.Bits() == 0 {
			return nil, nil
		}
		prefixes = append(prefixes, p.Masked())
	}
	if len(prefixes) == 0 {
		return nil, nil
	}
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range ifAddrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		addr, ok := netip.AddrFromSlice(ipnet.IP)
		if !ok {
			continue
		}
		addr = addr.Unmap()
		for _, p := range prefixes {
			if p.Contains(addr) {
				out = append(out, addr)
				break
			}
		}
	}
	return out, nil
}
