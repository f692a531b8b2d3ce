package iptables

import (
	"fmt"

	"github.com/svclab/svclab/proxy/iptables/chains"
)

// TableMangle is the table that, with nat and filter, holds a canary.
const TableMangle = "mangle"

// CanaryTables are the tables that get a canary, as upstream.
var CanaryTables = []string{TableMangle, TableNAT, TableFilter}

// CanaryRunner creates and looks for chains; kernel.ExecRunner is one.
type CanaryRunner interface {
	EnsureChain(table, chain string) error
	ChainExists(table, chain string) (bool, error)
}

// EnsureCanary creates the canary chain in every canary table.
func EnsureCanary(r CanaryRunner) error {
	for _, t := range CanaryTables {
		if err := r.EnsureChain(t, chains.ProxyCanary); err != nil {
			return fmt.Errorf("canary in %s: %w", t, err)
		}
	}
	return nil
}

// CanaryMissing reports whether the first canary table (mangle) lost its
// canary: one `iptables -S` per check, as upstream's Monitor
// (pkg/util/iptables) polls tables[0] only. Someone who flushes the rules
// flushes mangle with the others (a firewall reload, iptables -F in every
// table); the full resync that follows puts the canary back in every
// table. Upstream, once mangle's canary is gone, also waits up to five
// seconds for the other tables' to go before it resyncs; svclab's loop
// does not block on that: a resync rewrites every table anyway.
func CanaryMissing(r CanaryRunner) (bool, error) {
	t := CanaryTables[0]
	ok, err := r.ChainExists(t, chains.ProxyCanary)
	if err != nil {
		return false, fmt.Errorf("canary in %s: %w", t, err)
	}
	return !ok, nil
}
