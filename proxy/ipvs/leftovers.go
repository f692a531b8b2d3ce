package ipvs

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/svclab/svclab/internal/iptsave"
	"github.com/svclab/svclab/proxy/iptables/chains"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// Leftovers is what kube-proxy's modes left in one node.
type Leftovers struct {
	// Chains are kube-proxy's iptables chains, per table.
	Chains map[string][]string
	// VirtualServers are the IPVS services kube-proxy made.
	VirtualServers []kernel.VirtualServer
	// Dummy says whether kube-ipvs0 exists; DummyAddresses are its
	// addresses.
	Dummy          bool
	DummyAddresses []netip.Addr
	// IPSets are the IPVS mode's ipsets.
	IPSets []string
	// NFTables are the nftables families ("ip", "ip6") whose kube-proxy
	// table exists: the nftables mode's state. FindLeftovers does not fill
	// it (this package speaks iptables and netlink); the caller does, from
	// nftables.FindTables.
	NFTables []string
}

// nftablesMode is the nftables mode's name, as /proxyMode answers it.
const nftablesMode = "nftables"

// FindLeftovers lists what kube-proxy's modes left in the node whose
// kernel and iptables are given (nothing is changed).
func FindLeftovers(k kernel.Interface, ipt iptkernel.Runner) (*Leftovers, error) {
	l := &Leftovers{Chains: map[string][]string{}}
	var err error
	if l.VirtualServers, err = kubeProxyVirtualServers(k); err != nil {
		return nil, err
	}
	if l.DummyAddresses, l.Dummy, err = k.Addresses(DummyDevice); err != nil {
		return nil, err
	}
	for _, table := range leftoverTables {
		save, err := ipt.Save(table)
		if err != nil {
			return nil, err
		}
		for _, c := range iptsave.ChainNames(string(save)) {
			if IsKubeProxyChain(table, c) {
				l.Chains[table] = append(l.Chains[table], c)
			}
		}
	}
	sets, err := k.ListSets()
	if err != nil {
		return nil, err
	}
	for _, s := range sets {
		if IsKubeProxySet(s.Name) {
			l.IPSets = append(l.IPSets, s.Name)
		}
	}
	return l, nil
}

// Empty reports whether nothing was left.
func (l *Leftovers) Empty() bool {
	return len(l.Chains["nat"]) == 0 && len(l.Chains["filter"]) == 0 && len(l.Chains["mangle"]) == 0 && len(l.VirtualServers) == 0 && !l.Dummy &&
		len(l.IPSets) == 0 && len(l.NFTables) == 0
}

// madeByIPTablesModeOnly reports whether chain is one the iptables mode
// makes and the IPVS mode does not: its node port and external services
// chains, and the per-service chains.
func madeByIPTablesModeOnly(chain string) bool {
	return chain == chains.NodePorts || chain == chains.ExternalServices || chains.IsPerService(chain)
}

// Modes guesses which modes left the leftovers: "iptables" for its own
// chains (KUBE-NODEPORTS, KUBE-EXTERNAL-SERVICES, per-service chains),
// "ipvs" for kube-ipvs0, IPVS services, ipsets or its KUBE-NODE-PORT chain.
// Chains both modes share (KUBE-SERVICES...) say nothing either way.
func (l *Leftovers) Modes() []string {
	var modes []string
	iptablesMode := false
	for _, table := range []string{"nat", "filter"} {
		for _, c := range l.Chains[table] {
			if madeByIPTablesModeOnly(c) {
				iptablesMode = true
			}
		}
	}
	if iptablesMode {
		modes = append(modes, "iptables")
	}
	ipvsMode := l.Dummy || len(l.VirtualServers) > 0 || len(l.IPSets) > 0 ||
		slices.Contains(l.Chains["nat"], ChainNodePort) || slices.Contains(l.Chains["filter"], ChainIPVSFilter)
	if ipvsMode {
		modes = append(modes, "ipvs")
	}
	if len(l.NFTables) > 0 {
		modes = append(modes, nftablesMode)
	}
	return modes
}

// String lists the leftovers for a person, one kind a line.
func (l *Leftovers) String() string {
	if l.Empty() {
		return "nothing left by kube-proxy\n"
	}
	var b strings.Builder
	svc := 0
	for _, table := range leftoverTables {
		var fixed []string
		for _, c := range l.Chains[table] {
			if chains.IsPerService(c) {
				svc++
			} else {
				fixed = append(fixed, c)
			}
		}
		if len(fixed) > 0 {
			fmt.Fprintf(&b, "iptables %s chains: %s\n", table, strings.Join(fixed, " "))
		}
	}
	if svc > 0 {
		fmt.Fprintf(&b, "iptables per-service chains (KUBE-SVC-/SEP-/EXT-/FW-/SVL-): %d\n", svc)
	}
	if len(l.VirtualServers) > 0 {
		fmt.Fprintf(&b, "IPVS virtual servers: %d\n", len(l.VirtualServers))
	}
	if l.Dummy {
		fmt.Fprintf(&b, "%s: %d addresses\n", DummyDevice, len(l.DummyAddresses))
	}
	if len(l.IPSets) > 0 {
		fmt.Fprintf(&b, "ipsets: %s\n", strings.Join(l.IPSets, " "))
	}
	for _, f := range l.NFTables {
		fmt.Fprintf(&b, "nftables table: %s kube-proxy\n", f)
	}
	return b.String()
}

// ForeignTo keeps only what the given mode ("iptables", "ipvs" or
// "nftables") would not have made itself: after a switch to that mode, the
// other mode's leftovers. Between iptables and ipvs upstream kube-proxy
// (since 1.15) does not clean them when it starts; a proxy starting in
// nftables mode removes the iptables-based modes' state and one starting in
// an iptables-based mode removes the nftables tables, so after a finished
// switch to or from nftables this is empty.
func (l *Leftovers) ForeignTo(mode string) *Leftovers {
	if mode == nftablesMode { // everything but the nftables tables
		out := *l
		out.NFTables = nil
		return &out
	}
	out := &Leftovers{Chains: map[string][]string{}, NFTables: l.NFTables}
	if mode != Mode { // running iptables mode: IPVS state is foreign
		out.VirtualServers, out.Dummy, out.DummyAddresses, out.IPSets = l.VirtualServers, l.Dummy, l.DummyAddresses, l.IPSets
	}
	for table, chains := range l.Chains {
		for _, c := range chains {
			iptablesOnly := madeByIPTablesModeOnly(c)
			ipvsOnly := c == ChainNodePort || c == ChainLoadBalancer || c == ChainIPVSFilter || c == ChainIPVSOutFilter || c == ChainSourceRangesFirewall
			if (mode == Mode && iptablesOnly) || (mode != Mode && ipvsOnly) {
				out.Chains[table] = append(out.Chains[table], c)
			}
		}
	}
	return out
}
