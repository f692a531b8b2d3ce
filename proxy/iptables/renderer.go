package iptables

import (
	"slices"

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
	opts.LocalhostNodePorts = opts.localhostNodePortsInEffect()
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
	r.assemble(res, writeChains, full)
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
// tables), and for a full resync: the proxy's sync loop forces one every
// hour (upstream's proxyutil.FullSyncPeriod) and when the canary chain is
// gone (see EnsureCanary).
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
// filter chains are all rewritten whenever the filter table is written.
func (r *Renderer) SetExistingChains(table string, chains []string) {
	if table != TableNAT {
		return
	}
	r.existingNAT = slices.Clone(chains)
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
