package nftables

// tableContents is what the renderer knows the kernel's table holds of the
// per-service objects after its last committed transaction: the service
// and endpoint chains (true when flushed and waiting to be deleted) and the
// affinity sets. A partial sync renders against it instead of listing the
// table (upstream lists it on every sync, kubernetes#139513); a full sync
// takes it over from a View read from the kernel.
type tableContents struct {
	// known is false until a listing succeeded and after a failed
	// transaction: the next sync must read the kernel.
	known        bool
	chains       map[string]bool
	affinitySets map[string]struct{}
}

// tableFromView is what view shows of the per-service objects. A view
// whose listing failed shows none, and leaves the contents unknown.
func tableFromView(view *View) tableContents {
	t := tableContents{known: view.Listed, chains: map[string]bool{}, affinitySets: map[string]struct{}{}}
	if !view.Listed {
		return t
	}
	for _, chain := range view.Chains {
		if isServiceChainName(chain) {
			t.chains[chain] = false
		}
	}
	for _, set := range view.Sets {
		if isAffinitySetName(set) {
			t.affinitySets[set] = struct{}{}
		}
	}
	return t
}

// existingTable is what the render starts from: what view shows when the
// sync read the kernel, else what the last committed transaction left.
func (r *Renderer) existingTable(view *View) tableContents {
	if view != nil {
		return tableFromView(view)
	}
	if !r.table.known {
		return tableContents{chains: map[string]bool{}, affinitySets: map[string]struct{}{}}
	}
	return r.table
}

// KnowsTable reports whether the renderer knows what the kernel's table
// holds (a sync may then render without reading it).
func (r *Renderer) KnowsTable() bool { return r.table.known }

// ChainsDeleted records that chains (stale ones) were deleted from the
// kernel.
func (r *Renderer) ChainsDeleted(chains []string) {
	for _, c := range chains {
		delete(r.table.chains, c)
	}
}
