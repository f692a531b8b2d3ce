package nftables

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/model"
)

// View is what the kernel's table holds, read by the sync before a full
// render (upstream reads the same: ListAll on every sync, the elements of
// its sets and maps on full syncs). Partial renders need none: they work
// from what the last committed transaction wrote.
type View struct {
	// Listed is false when listing the table failed: no stale chain or
	// affinity set is then found, and the next render is a full one again.
	Listed bool
	// Chains and Sets are the table's chain and set names.
	Chains, Sets []string
	// Elements are the elements of the fixed sets and maps by name;
	// Unreadable names those whose listing failed with more than "not
	// found" (they are flushed).
	Elements   map[string][]*knftables.Element
	Unreadable map[string]bool
}

// Plan is what a rendered transaction does besides its content, for the
// sync to finish after the transaction succeeded.
type Plan struct {
	Full bool
	// StaleChains were flushed; delete them once the kernel no longer
	// references them (at least a second later, as upstream).
	StaleChains []string
	// ActiveChains are the service chains the transaction wrote: not
	// stale (any more).
	ActiveChains []string
	// ServicePorts and Endpoints count the snapshot; RenderedServices
	// the services whose chains and elements were written.
	ServicePorts, Endpoints, RenderedServices int
}

// Renderer renders snapshots into transactions that change only what
// differs from what the kernel holds. It remembers, per service, what its
// last committed transaction wrote (chains, affinity sets, elements), so a
// partial render touches only the services that changed; it never touches
// the kernel itself.
type Renderer struct {
	opts Options

	baseChainsRecreated bool
	needFull            bool
	// services is what the committed transactions wrote, per service;
	// pending what the rendered, not yet committed one writes.
	services map[serviceID]*serviceState
	pending  pendingCommit
	// names are the chain names of each service port, hashed once.
	names map[model.ServicePortName]*portNameCache

	clusterIPs, serviceIPs, firewallIPs     *elementStorage
	noEndpointServices, noEndpointNodePorts *elementStorage
	serviceNodePorts, hairpinConnections    *elementStorage
}

// pendingCommit is what Committed records of the last Render.
type pendingCommit struct {
	full bool
	// listed: the full render's View came from a successful listing.
	listed   bool
	services map[serviceID]*serviceState
	removed  []serviceID
}

// NewRenderer checks opts and returns a renderer whose first Render is a
// full one.
func NewRenderer(opts Options) (*Renderer, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.Family = opts.family()
	return &Renderer{
		opts:                opts,
		needFull:            true,
		services:            map[serviceID]*serviceState{},
		names:               map[model.ServicePortName]*portNameCache{},
		clusterIPs:          newElementStorage(true, clusterIPsSet),
		serviceIPs:          newElementStorage(false, serviceIPsMap),
		firewallIPs:         newElementStorage(false, firewallIPsMap),
		noEndpointServices:  newElementStorage(false, noEndpointServicesMap),
		noEndpointNodePorts: newElementStorage(false, noEndpointNodePortsMap),
		serviceNodePorts:    newElementStorage(false, serviceNodePortsMap),
		hairpinConnections:  newElementStorage(true, hairpinConnectionsSet),
	}, nil
}

// Family is the IP family the renderer writes.
func (r *Renderer) Family() corev1.IPFamily { return r.opts.Family }

// NeedsFull reports whether the next Render must be a full one (the first,
// after a failed transaction, or after a full one that could not list the
// table).
func (r *Renderer) NeedsFull() bool { return r.needFull }

// storages are the fixed sets and maps, in upstream's order.
func (r *Renderer) storages() []*elementStorage {
	return []*elementStorage{r.clusterIPs, r.serviceIPs, r.firewallIPs, r.noEndpointServices,
		r.noEndpointNodePorts, r.serviceNodePorts, r.hairpinConnections}
}

// ContainerNames are the sets and maps whose elements a full sync reads
// into the View.
func ContainerNames() (sets, maps []string) {
	return []string{clusterIPsSet, hairpinConnectionsSet},
		[]string{serviceIPsMap, firewallIPsMap, noEndpointServicesMap, noEndpointNodePortsMap, serviceNodePortsMap}
}

// Render adds to tx what makes the kernel's table match snap. full (view
// is then what the kernel holds) rewrites the fixed part and every
// service's chains, takes the elements over from view and flushes the
// service chains view shows that no service uses. Otherwise only the
// services that changed since the last Committed snapshot are rewritten,
// from what the committed transactions wrote: their chains, the elements
// that differ, their chains and affinity sets no longer used. Call
// Committed after tx ran, or Failed.
func (r *Renderer) Render(tx *knftables.Transaction, snap *model.Snapshot, view *View, full bool) Plan {
	full = full || r.needFull
	if full && view == nil {
		view = &View{}
	}
	if full {
		r.setUp(tx, view)
	}
	c := r.changedServices(snap, full)
	plan := Plan{Full: full, ServicePorts: len(snap.ServicePorts), Endpoints: snap.EndpointCount(), RenderedServices: len(c.render)}
	r.pending = pendingCommit{full: full, listed: full && view.Listed, services: make(map[serviceID]*serviceState, len(c.render)), removed: c.removed}
	var previous serviceState // the chains and affinity sets the rewritten services had
	if !full {
		for _, g := range c.render {
			r.release(g.id, &previous)
		}
		for _, id := range c.removed {
			r.release(id, &previous)
		}
	}
	created, activeAffinity := chainSet{}, chainSet{}
	for _, g := range c.render {
		p := &portRender{r: r, tx: tx, service: g.id, state: &serviceState{}, created: created, affinity: activeAffinity}
		for _, sp := range g.ports {
			p.state.ports = append(p.state.ports, cloneServicePort(sp))
			if snap.StablePointers {
				p.state.sources = append(p.state.sources, sp)
			}
			p.renderServicePort(sp)
		}
		r.pending.services[g.id] = p.state
	}
	for chain := range created {
		if isServiceChainName(chain) {
			plan.ActiveChains = append(plan.ActiveChains, chain)
		}
	}
	if full {
		previous = serviceState{chains: view.Chains, affinitySets: view.Sets}
	}
	r.dropUnused(tx, &plan, previous, created, activeAffinity)
	for _, s := range r.storages() {
		s.apply(tx)
	}
	return plan
}

// release gives up the elements a service wanted in the committed
// transactions and adds its chains and affinity sets to previous.
func (r *Renderer) release(id serviceID, previous *serviceState) {
	st := r.services[id]
	if st == nil {
		return
	}
	for _, w := range st.wants {
		w.storage.release(id, w.key)
	}
	previous.chains = append(previous.chains, st.chains...)
	previous.affinitySets = append(previous.affinitySets, st.affinitySets...)
}

// dropUnused flushes the service chains of previous that this transaction
// did not write (they wait to be deleted: Plan.StaleChains) and deletes
// the affinity sets of previous no longer used.
func (r *Renderer) dropUnused(tx *knftables.Transaction, plan *Plan, previous serviceState, created, activeAffinity chainSet) {
	for _, chain := range previous.chains {
		if _, ok := created[chain]; ok || !isServiceChainName(chain) {
			continue
		}
		tx.Flush(&knftables.Chain{Name: chain})
		plan.StaleChains = append(plan.StaleChains, chain)
	}
	for _, set := range previous.affinitySets {
		if _, ok := activeAffinity[set]; !ok && isAffinitySetName(set) {
			tx.Delete(&knftables.Set{Name: set})
		}
	}
}

// Committed records that the transaction of the last Render reached the
// kernel.
func (r *Renderer) Committed(_ *model.Snapshot) {
	p := r.pending
	r.pending = pendingCommit{}
	r.needFull = p.full && !p.listed
	if p.full {
		for id, st := range r.services {
			r.forgetNames(st, p.services[id])
		}
		r.services = p.services
		return
	}
	for id, st := range p.services {
		r.forgetNames(r.services[id], st)
		r.services[id] = st
	}
	for _, id := range p.removed {
		r.forgetNames(r.services[id], nil)
		delete(r.services, id)
	}
}

// forgetNames drops the cached names of the ports old had and current
// (nil: the service is gone) has not.
func (r *Renderer) forgetNames(old, current *serviceState) {
	if old == nil {
		return
	}
	for _, sp := range old.ports {
		if current == nil || !current.hasPort(sp.Name) {
			delete(r.names, sp.Name)
		}
	}
}

func (st *serviceState) hasPort(n model.ServicePortName) bool {
	for _, sp := range st.ports {
		if sp.Name == n {
			return true
		}
	}
	return false
}

// Failed records that the last transaction did not reach the kernel: the
// next Render is a full one.
func (r *Renderer) Failed() {
	r.needFull = true
	r.pending = pendingCommit{}
	clear(r.names)
}

// portTraffic is how one service port's traffic is routed, upstream's
// local variables of syncProxyRules.
type portTraffic struct {
	names                                       *portNameCache
	protocol, nameString                        string
	cluster, local, reachable                   []model.Endpoint
	hasEndpoints, hasInternal, hasExternal      bool
	usesClusterChain, usesLocalChain, usesExtCh bool
	internalChain, externalPolicyChain          string
	internalVerdict, externalVerdict            string
	affinity                                    bool
}

func classify(sp *model.ServicePort, names *portNameCache) *portTraffic {
	t := &portTraffic{names: names, protocol: strings.ToLower(string(sp.Protocol)), nameString: names.nameString}
	t.cluster, t.local, t.reachable, t.hasEndpoints = model.CategorizeEndpoints(sp)
	t.affinity = sp.SessionAffinity == corev1.ServiceAffinityClientIP
	t.usesClusterChain = len(t.cluster) > 0 && sp.UsesClusterEndpoints()
	t.usesLocalChain = len(t.local) > 0 && sp.UsesLocalEndpoints()
	t.internalChain, t.hasInternal = t.names.cluster, t.hasEndpoints
	if sp.InternalPolicyLocal {
		t.internalChain = t.names.local
		t.hasInternal = t.hasInternal && len(t.local) > 0
	}
	t.externalPolicyChain, t.hasExternal = t.names.cluster, t.hasEndpoints
	if sp.ExternalPolicyLocal {
		t.externalPolicyChain = t.names.local
		t.hasExternal = t.hasExternal && len(t.local) > 0
	}
	t.usesExtCh = t.hasEndpoints && sp.ExternallyAccessible()
	switch {
	case !t.hasEndpoints:
		t.internalVerdict = "goto " + rejectChain
		t.externalVerdict = "goto " + rejectChain
	default:
		if !t.hasInternal {
			t.internalVerdict = "drop"
		}
		if !t.hasExternal {
			t.externalVerdict = "drop"
		}
	}
	return t
}

// portRender writes the ports of one service into a transaction and
// records what it wrote in the service's state.
type portRender struct {
	r       *Renderer
	tx      *knftables.Transaction
	service serviceID
	state   *serviceState
	// created are the chains this transaction added and flushed;
	// affinity the affinity sets the rendered services use.
	created, affinity chainSet
}

// chain adds and flushes chain (once per transaction) as the service's.
func (p *portRender) chain(chain string) {
	if _, ok := p.created[chain]; ok {
		return
	}
	ensureChain(p.tx, chain, p.created)
	p.state.chains = append(p.state.chains, chain)
}

// want records elem as wanted by the service (written when it differs
// from what the kernel holds).
func (p *portRender) want(s *elementStorage, elem *knftables.Element) {
	p.state.wants = append(p.state.wants, elementWant{storage: s, key: s.want(p.service, elem)})
}

// affinitySet records set as in use by the service.
func (p *portRender) affinitySet(set string) {
	if _, ok := p.affinity[set]; ok {
		return
	}
	p.affinity[set] = struct{}{}
	p.state.affinitySets = append(p.state.affinitySets, set)
}

// renderServicePort writes one service port: its chains and the elements
// it wants.
func (p *portRender) renderServicePort(sp *model.ServicePort) {
	r := p.r
	t := classify(sp, r.namesOfPort(sp.Name))
	ipX := r.opts.ipX()
	if t.affinity {
		t.names.keepEndpoints(t.reachable)
	}
	for _, ep := range t.reachable {
		if t.affinity {
			e := t.names.endpoint(sp.Name, ep)
			p.chain(e.chain)
			p.affinitySet(e.affinitySet)
		}
		if ep.IsLocal {
			ip := ep.IP.String()
			p.want(r.hairpinConnections, &knftables.Element{Set: hairpinConnectionsSet, Key: []string{ip, ip, t.protocol, itoa(ep.Port)}})
		}
	}
	if t.usesClusterChain {
		p.chain(t.names.cluster)
	}
	if t.usesLocalChain {
		p.chain(t.names.local)
	}
	if t.usesExtCh {
		p.chain(t.names.external)
	}
	p.renderElements(sp, t)
	if t.usesExtCh {
		r.writeExternalChain(p.tx, sp, t)
	}
	if len(sp.LoadBalancerVIPs) > 0 && len(sp.LoadBalancerSourceRanges) > 0 {
		r.writeFirewallChain(p.tx, sp, t, ipX)
	}
	r.writeEndpointRules(p.tx, sp, t, ipX)
}

// renderElements captures the port's cluster IP, external IPs, load
// balancer IPs and node port in the dispatch and no-endpoint maps.
func (p *portRender) renderElements(sp *model.ServicePort, t *portTraffic) {
	r := p.r
	port := itoa(sp.Port)
	comment := &t.nameString
	gotoExternal := "goto " + t.names.external
	p.want(r.clusterIPs, &knftables.Element{Set: clusterIPsSet, Key: []string{sp.ClusterIP.String()}})
	if t.hasInternal {
		p.want(r.serviceIPs, &knftables.Element{Map: serviceIPsMap, Key: []string{sp.ClusterIP.String(), t.protocol, port}, Value: []string{"goto " + t.internalChain}})
	} else {
		p.want(r.noEndpointServices, &knftables.Element{Map: noEndpointServicesMap, Key: []string{sp.ClusterIP.String(), t.protocol, port}, Value: []string{t.internalVerdict}, Comment: comment})
	}
	for _, ip := range sp.ExternalIPs {
		key := []string{ip.String(), t.protocol, port}
		if t.hasEndpoints {
			p.want(r.serviceIPs, &knftables.Element{Map: serviceIPsMap, Key: key, Value: []string{gotoExternal}})
		}
		if !t.hasExternal {
			p.want(r.noEndpointServices, &knftables.Element{Map: noEndpointServicesMap, Key: key, Value: []string{t.externalVerdict}, Comment: comment})
		}
	}
	usesFW := len(sp.LoadBalancerVIPs) > 0 && len(sp.LoadBalancerSourceRanges) > 0
	if usesFW {
		p.chain(t.names.firewall)
	}
	for _, ip := range sp.LoadBalancerVIPs {
		key := []string{ip.String(), t.protocol, port}
		if t.hasEndpoints {
			p.want(r.serviceIPs, &knftables.Element{Map: serviceIPsMap, Key: key, Value: []string{gotoExternal}})
		}
		if usesFW {
			p.want(r.firewallIPs, &knftables.Element{Map: firewallIPsMap, Key: key, Value: []string{"goto " + t.names.firewall}})
		}
	}
	if !t.hasExternal {
		for _, ip := range sp.LoadBalancerVIPs {
			p.want(r.noEndpointServices, &knftables.Element{Map: noEndpointServicesMap, Key: []string{ip.String(), t.protocol, port}, Value: []string{t.externalVerdict}, Comment: comment})
		}
	}
	if sp.NodePort != 0 {
		key := []string{t.protocol, itoa(sp.NodePort)}
		if t.hasEndpoints {
			p.want(r.serviceNodePorts, &knftables.Element{Map: serviceNodePortsMap, Key: key, Value: []string{gotoExternal}})
		}
		if !t.hasExternal {
			p.want(r.noEndpointNodePorts, &knftables.Element{Map: noEndpointNodePortsMap, Key: key, Value: []string{t.externalVerdict}, Comment: comment})
		}
	}
}

// writeExternalChain is the external-… chain: masquerade (Cluster policy),
// or with the Local policy the short-circuits of pod and host traffic to
// the Cluster chain; then the policy chain.
func (r *Renderer) writeExternalChain(tx *knftables.Transaction, sp *model.ServicePort, t *portTraffic) {
	o := &r.opts
	chain := t.names.external
	if !sp.ExternalPolicyLocal {
		tx.Add(&knftables.Rule{Chain: chain, Rule: knftables.Concat(o.masqueradeRule()), Comment: ptr.To("masquerade")})
	} else {
		if o.LocalDetector.implemented() {
			tx.Add(&knftables.Rule{Chain: chain, Rule: knftables.Concat(o.LocalDetector.IfLocal, "goto", t.names.cluster), Comment: ptr.To("short-circuit pod traffic")})
		}
		tx.Add(&knftables.Rule{Chain: chain, Rule: knftables.Concat("fib", "saddr", "type", "local", o.masqueradeRule()), Comment: ptr.To("masquerade local traffic")})
		tx.Add(&knftables.Rule{Chain: chain, Rule: knftables.Concat("fib", "saddr", "type", "local", "goto", t.names.cluster), Comment: ptr.To("short-circuit local traffic")})
	}
	if t.hasExternal {
		tx.Add(&knftables.Rule{Chain: chain, Rule: knftables.Concat("goto", t.externalPolicyChain)})
	}
}

// writeFirewallChain drops load balancer traffic from outside the source
// ranges (the VIPs themselves count as inside when a range holds the node's
// IP: the node reaching a VIP it has as a local address).
func (r *Renderer) writeFirewallChain(tx *knftables.Transaction, sp *model.ServicePort, t *portTraffic, ipX string) {
	var sources []string
	allowFromNode := false
	for _, cidr := range sp.LoadBalancerSourceRanges {
		if len(sources) > 0 {
			sources = append(sources, ",")
		}
		sources = append(sources, cidr.Masked().String())
		if r.opts.NodeIP.IsValid() && cidr.Contains(r.opts.NodeIP) {
			allowFromNode = true
		}
	}
	if allowFromNode {
		for _, ip := range sp.LoadBalancerVIPs {
			sources = append(sources, ",", ip.String())
		}
	}
	tx.Add(&knftables.Rule{Chain: t.names.firewall, Rule: knftables.Concat(ipX, "saddr", "!=", "{", sources, "}", "drop")})
}

// writeEndpointRules writes the policy chains: without affinity one DNAT
// through a numgen map; with affinity the affinity-set lookups, a numgen
// vmap to the endpoint chains, and those chains.
func (r *Renderer) writeEndpointRules(tx *knftables.Transaction, sp *model.ServicePort, t *portTraffic, ipX string) {
	if t.affinity {
		for _, ep := range t.reachable {
			tx.Add(&knftables.Set{
				Name: t.names.endpoint(sp.Name, ep).affinitySet,
				Type: r.opts.addrType(),
				// "dynamic" as upstream: some kernels add it anyway, and a
				// later add without it would then fail.
				Flags:   []knftables.SetFlag{knftables.DynamicFlag, knftables.TimeoutFlag},
				Timeout: ptr.To(time.Duration(sp.StickyMaxAgeSeconds) * time.Second),
			})
		}
	}
	policies := []struct {
		uses  bool
		chain string
		eps   []model.Endpoint
	}{{t.usesClusterChain, t.names.cluster, t.cluster}, {t.usesLocalChain, t.names.local, t.local}}
	for _, p := range policies {
		switch {
		case !p.uses:
		case t.affinity:
			r.writeEndpointJumps(tx, sp.Name, t.names, p.chain, p.eps, ipX)
		default:
			r.writeEndpointDNATs(tx, t.protocol, p.chain, p.eps, ipX)
		}
	}
	if !t.affinity {
		return
	}
	for _, ep := range t.reachable {
		e := t.names.endpoint(sp.Name, ep)
		tx.Add(&knftables.Rule{Chain: e.chain, Rule: knftables.Concat("update", "@", e.affinitySet, "{", ipX, "saddr", "}")})
		tx.Add(&knftables.Rule{Chain: e.chain, Rule: knftables.Concat("meta l4proto", t.protocol, "dnat to", ep.String())})
	}
}

// writeEndpointDNATs: `meta l4proto tcp dnat ip addr . port to numgen
// random mod N map { 0 : IP . port, … }`.
func (r *Renderer) writeEndpointDNATs(tx *knftables.Transaction, protocol, chain string, eps []model.Endpoint, ipX string) {
	elements := make([]string, 0, 6*len(eps))
	for i, ep := range eps {
		elements = append(elements, itoa(i), ":", ep.IP.String(), ".", itoa(ep.Port))
		if i != len(eps)-1 {
			elements = append(elements, ",")
		}
	}
	tx.Add(&knftables.Rule{Chain: chain, Rule: knftables.Concat(
		"meta l4proto", protocol, "dnat", ipX, "addr . port to", "numgen random mod", len(eps), "map", "{", elements, "}",
	)})
}

// writeEndpointJumps: one affinity lookup per endpoint, then `numgen
// random mod N vmap { 0 : goto endpoint-…, … }`.
func (r *Renderer) writeEndpointJumps(tx *knftables.Transaction, name model.ServicePortName, names *portNameCache, chain string, eps []model.Endpoint, ipX string) {
	elements := make([]string, 0, 5*len(eps))
	for i, ep := range eps {
		e := names.endpoint(name, ep)
		tx.Add(&knftables.Rule{Chain: chain, Rule: knftables.Concat(ipX, "saddr", "@", e.affinitySet, "goto", e.chain)})
		elements = append(elements, itoa(i), ":", "goto", e.chain)
		if i != len(eps)-1 {
			elements = append(elements, ",")
		}
	}
	tx.Add(&knftables.Rule{Chain: chain, Rule: knftables.Concat("numgen random mod", len(eps), "vmap", "{", elements, "}")})
}

// String is for errors and logs.
func (p Plan) String() string {
	return fmt.Sprintf("full=%v servicePorts=%d endpoints=%d stale=%d", p.Full, p.ServicePorts, p.Endpoints, len(p.StaleChains))
}
