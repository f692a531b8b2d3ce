package nftables

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/model"
)

// View is what the kernel's table holds, read by the sync before a full
// render (upstream reads the same: ListAll on every sync, the elements of
// its sets and maps on full syncs); partial renders use what the last
// committed transaction left instead.
type View struct {
	// Listed is false when listing the table failed: no stale chain or
	// affinity set is then found.
	Listed bool
	// Chains and Sets are the table's chain and set names.
	Chains, Sets []string
	// Elements are the elements of the fixed sets and maps by name (full
	// syncs only); Unreadable names those whose listing failed with more
	// than "not found" (they are flushed).
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
	// ActiveChains are existing service chains in use: not stale (any
	// more). A partial render names only those it revived.
	ActiveChains []string
	// ServicePorts and Endpoints count what was rendered.
	ServicePorts, Endpoints int
}

// Renderer renders snapshots into transactions that change only what
// differs from what the kernel holds. It remembers the elements of its sets
// and maps and the service ports it rendered last; it never touches the
// kernel itself.
type Renderer struct {
	opts Options

	baseChainsRecreated bool
	needFull            bool
	// rendered are the service ports of the last snapshot that reached the
	// kernel; a service whose ports all equal these keeps its chains.
	rendered map[model.ServicePortName]*model.ServicePort
	// removed are the service ports of rendered that the pending
	// transaction drops.
	removed []model.ServicePortName
	// names are the chain names of each service port, hashed once.
	names map[model.ServicePortName]*portNameCache
	// table is what the kernel's table holds after the last committed
	// transaction; pendingTable what it holds once the pending one ran.
	table, pendingTable tableContents

	clusterIPs, serviceIPs, firewallIPs     *elementStorage
	noEndpointServices, noEndpointNodePorts *elementStorage
	serviceNodePorts, hairpinConnections    *elementStorage
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
// or after a failed transaction).
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

// Render adds to tx what makes the kernel's table match snap. full rewrites
// the fixed part and every service's chains (and takes the elements over
// from view); otherwise only services that changed since the last
// Committed snapshot get their chains rewritten, and elements are added or
// deleted as they differ. Call Committed after tx ran, or Failed.
func (r *Renderer) Render(tx *knftables.Transaction, snap *model.Snapshot, view *View, full bool) Plan {
	full = full || r.needFull
	if full {
		r.setUp(tx, view)
	}
	existing := r.existingTable(view)
	active, activeAffinity := chainSet{}, chainSet{}
	changed := r.changedServices(snap, full)
	plan := Plan{Full: full, ServicePorts: len(snap.ServicePorts)}
	for _, sp := range snap.ServicePorts {
		plan.Endpoints += len(sp.Endpoints)
		_, isChanged := changed[serviceKey(sp.Name)]
		r.renderServicePort(tx, sp, !isChanged, active, activeAffinity)
	}
	r.pendingTable = tableContents{known: existing.known, chains: make(map[string]bool, len(active)), affinitySets: activeAffinity}
	for chain := range active {
		r.pendingTable.chains[chain] = false
	}
	r.flushStaleChains(tx, &plan, existing, active, view != nil)
	for set := range existing.affinitySets {
		if _, ok := activeAffinity[set]; !ok {
			tx.Delete(&knftables.Set{Name: set})
		}
	}
	for _, s := range r.storages() {
		s.deleteLeftovers(tx)
	}
	return plan
}

// flushStaleChains flushes the existing service chains no service uses any
// more and keeps them in the pending table as waiting to be deleted. A
// chain the last transactions already flushed is left alone, unless the
// kernel was read (listed): as upstream, a chain found again is flushed
// again and waits another second.
func (r *Renderer) flushStaleChains(tx *knftables.Transaction, plan *Plan, existing tableContents, active chainSet, listed bool) {
	for chain, flushed := range existing.chains {
		if _, ok := active[chain]; ok {
			if flushed || listed {
				plan.ActiveChains = append(plan.ActiveChains, chain)
			}
			continue
		}
		r.pendingTable.chains[chain] = true
		if flushed && !listed {
			continue
		}
		tx.Flush(&knftables.Chain{Name: chain})
		plan.StaleChains = append(plan.StaleChains, chain)
	}
}

// Committed records that the transaction of snap reached the kernel. It
// keeps copies of the service ports it rewrote, so that a caller that
// updates its snapshot's service ports in place still shows up as a change
// next time.
func (r *Renderer) Committed(snap *model.Snapshot) {
	r.needFull = false
	r.table, r.pendingTable = r.pendingTable, tableContents{}
	for _, name := range r.removed {
		delete(r.names, name)
	}
	r.removed = nil
	prev := r.rendered
	r.rendered = make(map[model.ServicePortName]*model.ServicePort, len(snap.ServicePorts))
	for _, sp := range snap.ServicePorts {
		if old, ok := prev[sp.Name]; ok && old.Equal(sp) {
			r.rendered[sp.Name] = old
			continue
		}
		r.rendered[sp.Name] = cloneServicePort(sp)
	}
}

func cloneServicePort(sp *model.ServicePort) *model.ServicePort {
	c := *sp
	c.ExternalIPs = slices.Clone(sp.ExternalIPs)
	c.LoadBalancerVIPs = slices.Clone(sp.LoadBalancerVIPs)
	c.LoadBalancerSourceRanges = slices.Clone(sp.LoadBalancerSourceRanges)
	c.Endpoints = slices.Clone(sp.Endpoints)
	return &c
}

// Failed records that the last transaction did not reach the kernel: the
// next Render is a full one.
func (r *Renderer) Failed() {
	r.needFull = true
	r.rendered = nil
	r.removed = nil
	clear(r.names)
	r.table, r.pendingTable = tableContents{}, tableContents{}
}

// serviceKey is a service's namespace/name: upstream rewrites the chains of
// a whole service when any of its ports or endpoints changed.
func serviceKey(n model.ServicePortName) string { return n.Namespace + "/" + n.Name }

// changedServices are the services whose chains must be rewritten: all of
// them on a full sync, else those with a port added, removed or different.
func (r *Renderer) changedServices(snap *model.Snapshot, full bool) map[string]struct{} {
	out := map[string]struct{}{}
	seen := make(map[model.ServicePortName]struct{}, len(snap.ServicePorts))
	for _, sp := range snap.ServicePorts {
		seen[sp.Name] = struct{}{}
		if full || !sp.Equal(r.rendered[sp.Name]) {
			out[serviceKey(sp.Name)] = struct{}{}
		}
	}
	r.removed = r.removed[:0]
	for name := range r.rendered {
		if _, ok := seen[name]; !ok {
			out[serviceKey(name)] = struct{}{}
			r.removed = append(r.removed, name)
		}
	}
	return out
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

// renderServicePort writes one service port: its elements always (they
// cost nothing when present), its chains unless skip says the service is
// unchanged since the last sync.
func (r *Renderer) renderServicePort(tx *knftables.Transaction, sp *model.ServicePort, skip bool, active, activeAffinity chainSet) {
	t := classify(sp, r.namesOfPort(sp.Name))
	ipX := r.opts.ipX()
	if !skip && t.affinity {
		t.names.keepEndpoints(t.reachable)
	}
	for _, ep := range t.reachable {
		if t.affinity {
			e := t.names.endpoint(sp.Name, ep)
			ensureChain(tx, e.chain, active, skip)
			activeAffinity[e.affinitySet] = struct{}{}
		}
		if ep.IsLocal {
			ip := ep.IP.String()
			r.hairpinConnections.ensure(tx, &knftables.Element{Set: hairpinConnectionsSet, Key: []string{ip, ip, t.protocol, itoa(ep.Port)}})
		}
	}
	if t.usesClusterChain {
		ensureChain(tx, t.names.cluster, active, skip)
	}
	if t.usesLocalChain {
		ensureChain(tx, t.names.local, active, skip)
	}
	if t.usesExtCh {
		ensureChain(tx, t.names.external, active, skip)
	}
	r.renderElements(tx, sp, t, active, skip)
	if skip {
		return
	}
	if t.usesExtCh {
		r.writeExternalChain(tx, sp, t)
	}
	if len(sp.LoadBalancerVIPs) > 0 && len(sp.LoadBalancerSourceRanges) > 0 {
		r.writeFirewallChain(tx, sp, t, ipX)
	}
	r.writeEndpointRules(tx, sp, t, ipX)
}

// renderElements captures the port's cluster IP, external IPs, load
// balancer IPs and node port in the dispatch and no-endpoint maps.
func (r *Renderer) renderElements(tx *knftables.Transaction, sp *model.ServicePort, t *portTraffic, active chainSet, skip bool) {
	port := itoa(sp.Port)
	comment := &t.nameString
	gotoExternal := "goto " + t.names.external
	r.clusterIPs.ensure(tx, &knftables.Element{Set: clusterIPsSet, Key: []string{sp.ClusterIP.String()}})
	if t.hasInternal {
		r.serviceIPs.ensure(tx, &knftables.Element{Map: serviceIPsMap, Key: []string{sp.ClusterIP.String(), t.protocol, port}, Value: []string{"goto " + t.internalChain}})
	} else {
		r.noEndpointServices.ensure(tx, &knftables.Element{Map: noEndpointServicesMap, Key: []string{sp.ClusterIP.String(), t.protocol, port}, Value: []string{t.internalVerdict}, Comment: comment})
	}
	for _, ip := range sp.ExternalIPs {
		key := []string{ip.String(), t.protocol, port}
		if t.hasEndpoints {
			r.serviceIPs.ensure(tx, &knftables.Element{Map: serviceIPsMap, Key: key, Value: []string{gotoExternal}})
		}
		if !t.hasExternal {
			r.noEndpointServices.ensure(tx, &knftables.Element{Map: noEndpointServicesMap, Key: key, Value: []string{t.externalVerdict}, Comment: comment})
		}
	}
	usesFW := len(sp.LoadBalancerVIPs) > 0 && len(sp.LoadBalancerSourceRanges) > 0
	if usesFW {
		ensureChain(tx, t.names.firewall, active, skip)
	}
	for _, ip := range sp.LoadBalancerVIPs {
		key := []string{ip.String(), t.protocol, port}
		if t.hasEndpoints {
			r.serviceIPs.ensure(tx, &knftables.Element{Map: serviceIPsMap, Key: key, Value: []string{gotoExternal}})
		}
		if usesFW {
			r.firewallIPs.ensure(tx, &knftables.Element{Map: firewallIPsMap, Key: key, Value: []string{"goto " + t.names.firewall}})
		}
	}
	if !t.hasExternal {
		for _, ip := range sp.LoadBalancerVIPs {
			r.noEndpointServices.ensure(tx, &knftables.Element{Map: noEndpointServicesMap, Key: []string{ip.String(), t.protocol, port}, Value: []string{t.externalVerdict}, Comment: comment})
		}
	}
	if sp.NodePort != 0 {
		key := []string{t.protocol, itoa(sp.NodePort)}
		if t.hasEndpoints {
			r.serviceNodePorts.ensure(tx, &knftables.Element{Map: serviceNodePortsMap, Key: key, Value: []string{gotoExternal}})
		}
		if !t.hasExternal {
			r.noEndpointNodePorts.ensure(tx, &knftables.Element{Map: noEndpointNodePortsMap, Key: key, Value: []string{t.externalVerdict}, Comment: comment})
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
