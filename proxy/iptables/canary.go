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

// CanaryMissing reports whether any canary table lost its canary. Upstream
// looks at the first table (mangle) only; svclab looks at all three, so a
// flush of the nat table alone is noticed too.
func CanaryMissing(r CanaryRunner) (bool, error) {
	for _, t := range CanaryTables {
		ok, err := r.ChainExists(t, chains.ProxyCanary)
		if err != nil {
			return false, fmt.Errorf("canary in %s: %w", t, err)
		}
		if !ok {
			return true, nil
		}
	}
	return false, nil
}
