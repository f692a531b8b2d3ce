package iptables

import (
	"bytes"
	"runtime"
	"slices"
	"sync"

	"github.com/svclab/svclab/proxy/model"
)

// largeClusterEndpointsThreshold is the endpoint count above which
// per-endpoint comments are left out to keep the payload small. Upstream:
// largeClusterEndpointsThreshold.
const largeClusterEndpointsThreshold = 1000

// Renderer turns snapshots into iptables-restore payloads, caching each
// service port's rules between calls.
//
// The protocol with the caller is: Render, try to apply the payload, then
// call Applied(result) if iptables-restore succeeded or Reset() if it
// failed. After Applied, the next Render sends only the service ports that
// changed (a partial sync); after Reset, or when neither was called, it
// sends everything (a full sync). Render keeps references to the
// snapshot's service ports: treat them as immutable.
//
// A Renderer is not safe for concurrent use.
type Renderer struct {
	opts Options
	mark string
	// writers render service ports, one per goroutine; writers[0] is used
	// alone for small batches.
	writers []*fragmentWriter
	// parts collects the payload's pieces before they are joined.
	parts [][]byte

	// rendered is the cache: the fragments of the latest Render, sorted by
	// service port name.
	rendered []*fragment
	// applied are the fragments the kernel holds as of the last Applied.
	applied []*fragment
	// appliedKnown is false until the first Applied and after Reset: the
	// next Render must then be a full sync.
	appliedKnown bool
	// pending is the latest Result not yet confirmed or rejected.
	pending *Result
	// existingNAT are nat chains reported by SetExistingChains, deleted by
	// the next full sync when no service owns them.
	existingNAT []string
	// largeCluster is the comment mode of the cached fragments.
	largeCluster bool

	filterHeader, filterFooter, natHeader, natPostrouting, natFooter lineBuf
}

// NewRenderer checks opts and returns a Renderer whose first Render is a full
// sync.
func NewRenderer(opts Options) (*Renderer, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	detector, err := opts.localDetector()
	if err != nil {
		return nil, err
	}
	r := &Renderer{opts: opts, mark: opts.masqueradeMark()}
	r.writers = []*fragmentWriter{{opts: &r.opts, detector: detector, probabilities: &probabilities{}}}
	r.writeFixedSections()
	return r, nil
}

// Render produces the payload that brings the kernel from the last applied
// state to snap. See Renderer for when it is a full sync.
func (r *Renderer) Render(snap *model.Snapshot) *Result {
	if r.pending != nil {
		// The caller never said whether the last payload went in.
		r.Reset()
	}
	full := !r.appliedKnown
	servicePorts := sortedServicePorts(snap)
	endpoints := 0
	for _, sp := range servicePorts {
		endpoints += len(sp.Endpoints)
	}
	large := endpoints > largeClusterEndpointsThreshold
	if large != r.largeCluster {
		// Every endpoint rule changes shape: rewrite everything.
		full = true
		r.largeCluster = large
	}

	previous := r.rendered
	r.rendered = r.refreshCache(servicePorts, large)

	res := &Result{
		FullSync:     full,
		ServicePorts: len(r.rendered),
		Endpoints:    endpoints,
		LargeCluster: large,
		fragments:    r.rendered,
	}
	writeChains := r.chainsToWrite(full)
	res.DeletedChains = r.chainsToDelete(full, previous)
	r.assemble(res, writeChains)
	r.pending = res
	return res
}

// Applied records that res went into the kernel. It must be the Result of
// the latest Render; for any other the next Render is a full sync.
func (r *Renderer) Applied(res *Result) {
	if res == nil || res != r.pending {
		r.Reset()
		return
	}
	r.applied = res.fragments
	r.appliedKnown = true
	r.pending = nil
	if res.FullSync {
		r.existingNAT = nil
	}
}

// Reset makes the next Render a full sync. Call it when applying a payload
// failed (the kernel may hold the old rules, the new ones, or a mix of
// tables), or to force the periodic full sync upstream does every hour.
// Cached renderings are kept: they depend on the snapshot only.
func (r *Renderer) Reset() {
	r.appliedKnown = false
	r.pending = nil
}

// NeedsFullSync reports whether the next Render will be a full sync (it may
// also become one when the snapshot crosses the large-cluster threshold).
// Before a full sync the caller should ensure JumpRules and report the
// kernel's chains with SetExistingChains.
func (r *Renderer) NeedsFullSync() bool {
	return !r.appliedKnown || r.pending != nil
}

// SetExistingChains tells the renderer which chains a table currently holds
// (from iptables-save; see ChainsFromSave). The next full sync deletes the
// per-service nat chains among them that no service owns any more, as
// upstream does after restarts. Other tables are ignored: kube-proxy's
// filter chains are all rewritten on every sync.
func (r *Renderer) SetExistingChains(table string, chains []string) {
	if table != TableNAT {
		return
	}
	r.existingNAT = slices.Clone(chains)
}

// refreshCache returns the fragments for servicePorts, reusing the cached
// one of every service port that did not change.
func (r *Renderer) refreshCache(servicePorts []*model.ServicePort, large bool) []*fragment {
	prev := r.rendered
	next := make([]*fragment, len(servicePorts))
	var todo []int
	maxEndpoints := 0
	j := 0
	for i, sp := range servicePorts {
		for j < len(prev) && prev[j].sp.Name.Compare(sp.Name) < 0 {
			j++
		}
		if j < len(prev) && prev[j].largeCluster == large && prev[j].sp.Equal(sp) {
			next[i] = prev[j]
			continue
		}
		todo = append(todo, i)
		maxEndpoints = max(maxEndpoints, len(sp.Endpoints))
	}
	r.render(servicePorts, todo, next, large, maxEndpoints)
	return next
}

// minServicePortsPerWorker keeps small renders on one goroutine, where
// starting others costs more than it saves.
const minServicePortsPerWorker = 256

// render fills next[i] for every i in todo, spreading large batches over
// GOMAXPROCS goroutines.
func (r *Renderer) render(servicePorts []*model.ServicePort, todo []int, next []*fragment, large bool, maxEndpoints int) {
	workers := min(runtime.GOMAXPROCS(0), len(todo)/minServicePortsPerWorker)
	if workers <= 1 {
		for _, i := range todo {
			next[i] = r.writers[0].render(servicePorts[i], large)
		}
		return
	}
	// Fill the shared probability cache first, so workers only read it.
	first := r.writers[0]
	first.probabilities.of(maxEndpoints)
	for len(r.writers) < workers {
		r.writers = append(r.writers, &fragmentWriter{opts: first.opts, detector: first.detector, probabilities: first.probabilities})
	}
	var wg sync.WaitGroup
	chunk := (len(todo) + workers - 1) / workers
	for w := range workers {
		part := todo[min(w*chunk, len(todo)):min((w+1)*chunk, len(todo))]
		writer := r.writers[w]
		wg.Go(func() {
			for _, i := range part {
				next[i] = writer.render(servicePorts[i], large)
			}
		})
	}
	wg.Wait()
}

// chainsToWrite marks the fragments whose own chains go into the payload:
// all on a full sync, otherwise those that differ from what was applied.
func (r *Renderer) chainsToWrite(full bool) []bool {
	write := make([]bool, len(r.rendered))
	if full {
		for i := range write {
			write[i] = true
		}
		return write
	}
	j := 0
	for i, f := range r.rendered {
		for j < len(r.applied) && r.applied[j].sp.Name.Compare(f.sp.Name) < 0 {
			j++
		}
		write[i] = j >= len(r.applied) || r.applied[j] != f
	}
	return write
}

// chainsToDelete lists, sorted, the service chains that were (or may have
// been) created before and that no current fragment owns: those of the
// applied state, on a full sync also those of the previous, unconfirmed
// render and those reported by SetExistingChains.
func (r *Renderer) chainsToDelete(full bool, previous []*fragment) []string {
	gone := map[string]struct{}{}
	collect := func(old []*fragment) {
		for _, c := range diffFragments(old, r.rendered) {
			gone[c] = struct{}{}
		}
	}
	collect(r.applied)
	if full {
		collect(previous)
		if len(r.existingNAT) > 0 {
			active := map[string]struct{}{}
			for _, f := range r.rendered {
				for _, c := range f.chains {
					active[c] = struct{}{}
				}
			}
			for _, c := range r.existingNAT {
				if _, ok := active[c]; !ok && IsServiceChain(c) {
					gone[c] = struct{}{}
				}
			}
		}
	}
	out := make([]string, 0, len(gone))
	for c := range gone {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// diffFragments walks two name-sorted fragment lists and returns the chains
// owned in old but not in new.
func diffFragments(old, new []*fragment) []string {
	var out []string
	j := 0
	for _, o := range old {
		for j < len(new) && new[j].sp.Name.Compare(o.sp.Name) < 0 {
			j++
		}
		var n *fragment
		if j < len(new) && new[j].sp.Name == o.sp.Name {
			n = new[j]
		}
		if n == o {
			continue
		}
		out = append(out, removedChains(o, n)...)
	}
	return out
}

// assemble writes the payload in upstream's layout: in each table the chain
// declarations, then the rules; per service port its shared-chain rules
// followed by its own chains' rules.
func (r *Renderer) assemble(res *Result, writeChains []bool) {
	parts := append(r.parts[:0], r.filterHeader.b)
	res.FilterRules = r.filterHeader.lines + r.filterFooter.lines
	for _, f := range r.rendered {
		parts = append(parts, f.filterRules())
		res.FilterRules += f.filterLines
	}
	parts = append(parts, r.filterFooter.b)

	// nat: declarations
	parts = append(parts, r.natHeader.b)
	for i, f := range r.rendered {
		if writeChains[i] {
			parts = append(parts, f.natChainDecls())
			res.ChangedServicePorts++
		}
		res.NATChains += len(f.chains)
	}
	var deletedDecls, deletedRules lineBuf
	for _, c := range res.DeletedChains {
		deletedDecls.chainLine(c)
		deletedRules.line("-X", c)
	}
	parts = append(parts, deletedDecls.b)

	// nat: rules
	parts = append(parts, r.natPostrouting.b)
	res.NATRules = r.natPostrouting.lines + r.natFooter.lines
	for i, f := range r.rendered {
		parts = append(parts, f.natShared())
		res.NATRules += f.sharedLines
		if writeChains[i] {
			parts = append(parts, f.natChainRules())
			res.NATRules += f.chainRuleLines
		}
	}
	parts = append(parts, deletedRules.b, r.natFooter.b)

	// bytes.Join sizes the payload exactly and does not zero it first.
	res.Payload = bytes.Join(parts, nil)
	clear(parts)
	r.parts = parts[:0]
}

// writeFixedSections renders the parts of every payload that do not depend
// on services.
func (r *Renderer) writeFixedSections() {
	mark := r.mark

	h := &r.filterHeader
	h.line("*filter")
	for _, c := range []string{ChainServices, ChainExternalServices, ChainForward, ChainNodePorts, ChainProxyFirewall} {
		h.chainLine(c)
	}
	if r.opts.LocalhostNodePorts {
		// Kubelet writes the same rule; it blocks the security hole
		// route_localnet opens (https://issue.k8s.io/90259).
		h.chainLine(ChainKubeletFirewall)
		h.line("-A", ChainKubeletFirewall, "-m", "comment", "--comment", `"block incoming localnet connections"`,
			"-d", "127.0.0.0/8", "!", "-s", "127.0.0.0/8", "-m", "conntrack", "!", "--ctstate", "RELATED,ESTABLISHED,DNAT", "-j", "DROP")
	}

	f := &r.filterFooter
	if !r.opts.ConntrackTCPBeLiberal {
		// Out-of-window packets would otherwise reset connections
		// (kubernetes/kubernetes#74839).
		f.line("-A", ChainForward, "-m", "conntrack", "--ctstate", "INVALID", "-j", "DROP")
	}
	f.line("-A", ChainForward, "-m", "comment", "--comment", `"kubernetes forwarding rules"`,
		"-m", "mark", "--mark", mark+"/"+mark, "-j", "ACCEPT")
	f.line("-A", ChainForward, "-m", "comment", "--comment", `"kubernetes forwarding conntrack rule"`,
		"-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT")
	f.line("COMMIT")

	n := &r.natHeader
	n.line("*nat")
	for _, c := range []string{ChainServices, ChainNodePorts, ChainPostrouting, ChainMarkMasq} {
		n.chainLine(c)
	}

	p := &r.natPostrouting
	p.line("-A", ChainPostrouting, "-m", "mark", "!", "--mark", mark+"/"+mark, "-j", "RETURN")
	// Clear the mark so a packet that loops through the stack again is not
	// masqueraded twice.
	p.line("-A", ChainPostrouting, "-j", "MARK", "--xor-mark", mark)
	p.words("-A", ChainPostrouting, "-m", "comment", "--comment", `"kubernetes service traffic requiring SNAT"`, "-j", "MASQUERADE")
	if r.opts.RandomFully {
		p.word("--random-fully")
	}
	p.end()
	p.line("-A", ChainMarkMasq, "-j", "MARK", "--or-mark", mark)

	// The tail call to KUBE-NODEPORTS must be the last rule of
	// KUBE-SERVICES.
	t := &r.natFooter
	const comment = `"kubernetes service nodeports; NOTE: this must be the last rule in this chain"`
	if len(r.opts.NodePortAddresses) == 0 {
		t.words("-A", ChainServices, "-m", "comment", "--comment", comment, "-m", "addrtype", "--dst-type", "LOCAL")
		if !r.opts.LocalhostNodePorts {
			t.words("!", "-d", "127.0.0.0/8")
		}
		t.line("-j", ChainNodePorts)
	} else {
		for _, ip := range r.opts.NodePortAddresses {
			if ip.IsLoopback() && !r.opts.LocalhostNodePorts {
				continue
			}
			t.words("-A", ChainServices, "-m", "comment", "--comment", comment, "-d")
			t.addr(ip)
			t.line("-j", ChainNodePorts)
		}
	}
	t.line("COMMIT")
}

// sortedServicePorts returns the snapshot's service ports sorted by name
// with duplicates dropped, copying only when the snapshot is not already
// in order.
func sortedServicePorts(snap *model.Snapshot) []*model.ServicePort {
	if snap == nil {
		return nil
	}
	sps := snap.ServicePorts
	ordered := true
	for i := 1; i < len(sps); i++ {
		if sps[i-1].Name.Compare(sps[i].Name) >= 0 {
			ordered = false
			break
		}
	}
	if ordered {
		return sps
	}
	sps = slices.Clone(sps)
	slices.SortStableFunc(sps, func(a, b *model.ServicePort) int { return a.Name.Compare(b.Name) })
	return slices.CompactFunc(sps, func(a, b *model.ServicePort) bool { return a.Name == b.Name })
}
