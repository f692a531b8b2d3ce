package iptables

import (
	"errors"
	"fmt"
	"os/exec"
)

// TableMangle is the table that, with nat and filter, holds a canary.
const TableMangle = "mangle"

// CanaryChain is the empty chain whose disappearance tells that someone
// flushed the tables (a firewall reload, `iptables -t nat -F; -X`).
// Upstream: kubeProxyCanaryChain, watched by utiliptables.Monitor.
const CanaryChain = "KUBE-PROXY-CANARY"

// CanaryTables are the tables that get a canary, as upstream.
var CanaryTables = []string{TableMangle, TableNAT, TableFilter}

// CanaryRunner creates and looks for chains; ExecRunner is one.
type CanaryRunner interface {
	EnsureChain(table, chain string) error
	ChainExists(table, chain string) (bool, error)
}

// EnsureCanary creates the canary chain in every canary table.
func EnsureCanary(r CanaryRunner) error {
	for _, t := range CanaryTables {
		if err := r.EnsureChain(t, CanaryChain); err != nil {
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
		ok, err := r.ChainExists(t, CanaryChain)
		if err != nil {
			return false, fmt.Errorf("canary in %s: %w", t, err)
		}
		if !ok {
			return true, nil
		}
	}
	return false, nil
}

// EnsureChain creates chain in table unless it exists (`iptables -N`).
func (r *ExecRunner) EnsureChain(table, chain string) error { return r.ensureChain(table, chain) }

// ChainExists reports whether table holds chain (`iptables -S chain`,
// which fails with status 1 when it does not).
func (r *ExecRunner) ChainExists(table, chain string) (bool, error) {
	_, err := r.iptables("-t", table, "-S", chain)
	if err == nil {
		return true, nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() == 1 {
		return false, nil
	}
	return false, err
}
