package iptables

import (
	"slices"

	"github.com/svclab/svclab/proxy/iptables/chains"
)

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
		if j < len(r.applied) && r.applied[j] == f {
			j++ // unchanged: the common case, no name comparison needed
			continue
		}
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
				if _, ok := active[c]; !ok && chains.IsPerService(c) {
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
		if j < len(new) && new[j] == o {
			j++ // unchanged: the common case
			continue
		}
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
// followed by its own chains' rules. A partial sync leaves out what the
// kernel holds already (sharedToWrite): the filter table, and nat's
// shared chains, when no service port's rules in them changed.
func (r *Renderer) assemble(res *Result, writeChains []bool, full bool) {
	parts := r.parts[:0]
	res.FilterTable, res.SharedNATChains = r.sharedToWrite(writeChains, res.DeletedChains, full)
	if res.FilterTable {
		parts = append(parts, r.filterHeader.b)
		res.FilterRules = r.filterHeader.lines + r.filterFooter.lines
		for _, f := range r.rendered {
			parts = append(parts, f.filterRules())
			res.FilterRules += f.filterLines
		}
		parts = append(parts, r.filterFooter.b)
	}

	// nat: declarations
	if res.SharedNATChains {
		parts = append(parts, r.natHeader.b)
	} else {
		parts = append(parts, natTableLine)
	}
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
	if res.SharedNATChains {
		parts = append(parts, r.natPostrouting.b)
		res.NATRules = r.natPostrouting.lines + r.natFooter.lines
	}
	for i, f := range r.rendered {
		if res.SharedNATChains {
			parts = append(parts, f.natShared())
			res.NATRules += f.sharedLines
		}
		if writeChains[i] {
			parts = append(parts, f.natChainRules())
			res.NATRules += f.chainRuleLines
		}
	}
	parts = append(parts, deletedRules.b)
	if res.SharedNATChains {
		parts = append(parts, r.natFooter.b)
	} else {
		parts = append(parts, commitLine)
	}

	// The result keeps its own copy of the list (a slice header per part);
	// the parts themselves are never written again.
	res.parts = slices.Clone(parts)
	for _, p := range parts {
		res.size += len(p)
	}
	clear(parts)
	r.parts = parts[:0]
}
