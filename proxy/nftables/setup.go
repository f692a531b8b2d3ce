package nftables

import (
	"strings"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"
)

// baseChain is one chain hooked into netfilter; all are named
// "${type}-${hook}".
type baseChain struct {
	name      string
	chainType knftables.BaseChainType
	hook      knftables.BaseChainHook
	priority  knftables.BaseChainPriority
}

// baseChains are upstream's nftablesBaseChains, in its order.
var baseChains = []baseChain{
	{filterPreroutingPreDNATChain, knftables.FilterType, knftables.PreroutingHook, knftables.DNATPriority + "-10"},
	{filterOutputPreDNATChain, knftables.FilterType, knftables.OutputHook, knftables.DNATPriority + "-10"},
	{filterInputChain, knftables.FilterType, knftables.InputHook, knftables.FilterPriority},
	{filterForwardChain, knftables.FilterType, knftables.ForwardHook, knftables.FilterPriority},
	{filterOutputChain, knftables.FilterType, knftables.OutputHook, knftables.FilterPriority},
	{natPreroutingChain, knftables.NATType, knftables.PreroutingHook, knftables.DNATPriority},
	{natOutputChain, knftables.NATType, knftables.OutputHook, knftables.DNATPriority},
	{natPostroutingChain, knftables.NATType, knftables.PostroutingHook, knftables.SNATPriority},
}

// jumpChain is a jump from a base chain to one of the top-level chains.
type jumpChain struct {
	dst, src, extra string
}

// jumpChains are upstream's nftablesJumpChains, in its order.
var jumpChains = []jumpChain{
	{nodePortEndpointsCheckChain, filterInputChain, "ct state new"},
	{serviceEndpointsCheckChain, filterInputChain, "ct state new"},
	{serviceEndpointsCheckChain, filterForwardChain, "ct state new"},
	{serviceEndpointsCheckChain, filterOutputChain, "ct state new"},
	{firewallCheckChain, filterPreroutingPreDNATChain, "ct state new"},
	{firewallCheckChain, filterOutputPreDNATChain, "ct state new"},
	{servicesChain, natOutputChain, ""},
	{servicesChain, natPreroutingChain, ""},
	{masqueradingChain, natPostroutingChain, ""},
	{clusterIPsCheckChain, filterForwardChain, "ct state new"},
	{clusterIPsCheckChain, filterOutputChain, "ct state new"},
}

// chainSet remembers which chains a transaction created and flushed, so
// that none is flushed twice (which would lose rules added in between).
type chainSet map[string]struct{}

// ensureChain adds and flushes chain once per transaction.
func ensureChain(tx *knftables.Transaction, chain string, created chainSet) {
	if _, ok := created[chain]; ok {
		return
	}
	created[chain] = struct{}{}
	tx.Add(&knftables.Chain{Name: chain})
	tx.Flush(&knftables.Chain{Name: chain})
}

// setUp writes the table's fixed part, as upstream's setupNFTables does on
// every full sync, and takes over the kernel's elements into the storages.
func (r *Renderer) setUp(tx *knftables.Transaction, view *View) {
	o := &r.opts
	ipX, addrType := o.ipX(), o.addrType()
	tx.Add(&knftables.Table{Comment: ptr.To("rules for kube-proxy")})
	r.recreateBaseChainsOnce(tx)
	for _, bc := range baseChains {
		chain := &knftables.Chain{Name: bc.name, Type: ptr.To(bc.chainType), Hook: ptr.To(bc.hook), Priority: ptr.To(bc.priority)}
		tx.Add(chain)
		tx.Flush(chain)
	}
	created := chainSet{}
	for _, j := range jumpChains {
		ensureChain(tx, j.dst, created)
		tx.Add(&knftables.Rule{Chain: j.src, Rule: knftables.Concat(j.extra, "jump", j.dst)})
	}
	for _, chain := range []string{servicesChain, clusterIPsCheckChain, masqueradingChain} {
		ensureChain(tx, chain, created)
	}
	r.setUpMasquerading(tx, ipX, addrType)
	r.setUpClusterIPsCheck(tx, ipX, addrType)
	r.setUpNodePortIPs(tx, addrType)
	r.setUpNoEndpoints(tx, ipX, addrType)
	r.setUpFirewall(tx, ipX, addrType, created)
	r.setUpServiceDispatch(tx, ipX, addrType)
	for _, s := range r.storages() {
		s.reset(tx, view.Elements[s.name], view.Unreadable[s.name])
	}
}

// recreateBaseChainsOnce adds and deletes the base chains in the first
// full sync of this renderer, so that base chains left with other
// properties (a priority) are created anew rather than failing the
// transaction.
func (r *Renderer) recreateBaseChainsOnce(tx *knftables.Transaction) {
	if r.baseChainsRecreated {
		return
	}
	for _, bc := range baseChains {
		chain := &knftables.Chain{Name: bc.name}
		tx.Add(chain)
		tx.Delete(chain)
	}
	r.baseChainsRecreated = true
}

func (r *Renderer) setUpMasquerading(tx *knftables.Transaction, ipX, addrType string) {
	mark := r.opts.masqueradeMark()
	tx.Add(&knftables.Set{
		Name:    hairpinConnectionsSet,
		Type:    addrType + " . " + addrType + " . inet_proto . inet_service",
		Comment: ptr.To("service hairpin connections"),
	})
	tx.Add(&knftables.Rule{Chain: masqueradingChain, Rule: knftables.Concat(
		"mark", "and", mark, "!=", "0",
		"mark", "set", "mark", "xor", mark,
		"masquerade fully-random",
	)})
	tx.Add(&knftables.Rule{Chain: masqueradingChain, Rule: knftables.Concat(
		"ct status dnat",
		ipX, "saddr", ".", ipX, "daddr", ".", "meta l4proto", ".", "th dport", "@", hairpinConnectionsSet,
		"masquerade fully-random",
	)})
}

func (r *Renderer) setUpClusterIPsCheck(tx *knftables.Transaction, ipX, addrType string) {
	tx.Add(&knftables.Set{Name: clusterIPsSet, Type: addrType, Comment: ptr.To("Active ClusterIPs")})
	tx.Add(&knftables.Rule{
		Chain:   clusterIPsCheckChain,
		Rule:    knftables.Concat(ipX, "daddr", "@", clusterIPsSet, "reject"),
		Comment: ptr.To("Reject traffic to invalid ports of ClusterIPs"),
	})
	if len(r.opts.ServiceCIDRs) > 0 {
		cidrs := make([]string, len(r.opts.ServiceCIDRs))
		for i, p := range r.opts.ServiceCIDRs {
			cidrs[i] = p.String()
		}
		tx.Add(&knftables.Rule{
			Chain:   clusterIPsCheckChain,
			Rule:    knftables.Concat(ipX, "daddr", "{", strings.Join(cidrs, ","), "}", "drop"),
			Comment: ptr.To("Drop traffic to unallocated ClusterIPs"),
		})
	}
}

// setUpNodePortIPs fills nodeport-ips, or makes sure it does not exist
// (add+delete: a bare delete fails when it is missing).
func (r *Renderer) setUpNodePortIPs(tx *knftables.Transaction, addrType string) {
	tx.Add(&knftables.Set{Name: nodePortIPsSet, Type: addrType, Comment: ptr.To("IPs that accept NodePort traffic")})
	if r.opts.nodePortsOnAllAddresses() {
		tx.Delete(&knftables.Set{Name: nodePortIPsSet})
		return
	}
	tx.Flush(&knftables.Set{Name: nodePortIPsSet})
	for _, ip := range r.opts.NodePortAddresses {
		if ip.IsLoopback() {
			continue // nftables mode has no localhost node ports
		}
		tx.Add(&knftables.Element{Set: nodePortIPsSet, Key: []string{ip.String()}})
	}
}

func (r *Renderer) setUpNoEndpoints(tx *knftables.Transaction, ipX, addrType string) {
	tx.Add(&knftables.Map{
		Name:    noEndpointServicesMap,
		Type:    addrType + " . inet_proto . inet_service : verdict",
		Comment: ptr.To("vmap to drop or reject packets to services with no endpoints"),
	})
	tx.Add(&knftables.Map{
		Name:    noEndpointNodePortsMap,
		Type:    "inet_proto . inet_service : verdict",
		Comment: ptr.To("vmap to drop or reject packets to service nodeports with no endpoints"),
	})
	tx.Add(&knftables.Chain{Name: rejectChain, Comment: ptr.To("helper for @no-endpoint-services / @no-endpoint-nodeports")})
	tx.Flush(&knftables.Chain{Name: rejectChain})
	tx.Add(&knftables.Rule{Chain: rejectChain, Rule: "reject"})
	tx.Add(&knftables.Rule{Chain: serviceEndpointsCheckChain, Rule: knftables.Concat(
		ipX, "daddr", ".", "meta l4proto", ".", "th dport", "vmap", "@", noEndpointServicesMap,
	)})
	if r.opts.nodePortsOnAllAddresses() {
		tx.Add(&knftables.Rule{Chain: nodePortEndpointsCheckChain, Rule: knftables.Concat(
			r.opts.noLocalhost(), "meta l4proto . th dport", "vmap", "@", noEndpointNodePortsMap,
		)})
	} else {
		tx.Add(&knftables.Rule{Chain: nodePortEndpointsCheckChain, Rule: knftables.Concat(
			ipX, "daddr", "@", nodePortIPsSet, "meta l4proto . th dport", "vmap", "@", noEndpointNodePortsMap,
		)})
	}
}

func (r *Renderer) setUpFirewall(tx *knftables.Transaction, ipX, addrType string, created chainSet) {
	tx.Add(&knftables.Map{
		Name:    firewallIPsMap,
		Type:    addrType + " . inet_proto . inet_service : verdict",
		Comment: ptr.To("destinations that are subject to LoadBalancerSourceRanges"),
	})
	ensureChain(tx, firewallCheckChain, created)
	tx.Add(&knftables.Rule{Chain: firewallCheckChain, Rule: knftables.Concat(
		ipX, "daddr", ".", "meta l4proto", ".", "th dport", "vmap", "@", firewallIPsMap,
	)})
}

func (r *Renderer) setUpServiceDispatch(tx *knftables.Transaction, ipX, addrType string) {
	o := &r.opts
	tx.Add(&knftables.Map{
		Name:    serviceIPsMap,
		Type:    addrType + " . inet_proto . inet_service : verdict",
		Comment: ptr.To("ClusterIP, ExternalIP and LoadBalancer IP traffic"),
	})
	tx.Add(&knftables.Map{Name: serviceNodePortsMap, Type: "inet_proto . inet_service : verdict", Comment: ptr.To("NodePort traffic")})
	switch {
	case o.MasqueradeAll:
		tx.Add(&knftables.Rule{
			Chain:   servicesChain,
			Rule:    knftables.Concat(ipX, "daddr", "@", clusterIPsSet, o.masqueradeRule()),
			Comment: ptr.To("masquerade all clusterIP traffic"),
		})
	case o.LocalDetector.implemented():
		// Off-cluster traffic to a cluster IP (a static route to any node)
		// may bounce to another node: masquerade it.
		tx.Add(&knftables.Rule{
			Chain:   servicesChain,
			Rule:    knftables.Concat(ipX, "daddr", "@", clusterIPsSet, o.LocalDetector.IfNotLocal, o.masqueradeRule()),
			Comment: ptr.To("masquerade clusterIP traffic from outside cluster"),
		})
	}
	tx.Add(&knftables.Rule{Chain: servicesChain, Rule: knftables.Concat(
		ipX, "daddr", ".", "meta l4proto", ".", "th dport", "vmap", "@", serviceIPsMap,
	)})
	if o.nodePortsOnAllAddresses() {
		tx.Add(&knftables.Rule{Chain: servicesChain, Rule: knftables.Concat(
			"fib daddr type local", o.noLocalhost(), "meta l4proto . th dport", "vmap", "@", serviceNodePortsMap,
		)})
	} else {
		tx.Add(&knftables.Rule{Chain: servicesChain, Rule: knftables.Concat(
			ipX, "daddr @nodeport-ips", "meta l4proto . th dport", "vmap", "@", serviceNodePortsMap,
		)})
	}
}
