package iptables

import (
	"testing"

	"github.com/svclab/svclab/proxy/iptables/chains"
)

// countingCanaryRunner is a CanaryRunner in memory that counts the checks
// (each one `iptables -S` on the real kernel).
type countingCanaryRunner struct {
	chains map[string]bool // "table/chain"
	checks []string        // the tables checked, in order
}

func (r *countingCanaryRunner) EnsureChain(table, chain string) error {
	r.chains[table+"/"+chain] = true
	return nil
}

func (r *countingCanaryRunner) ChainExists(table, chain string) (bool, error) {
	r.checks = append(r.checks, table)
	return r.chains[table+"/"+chain], nil
}

func newCanaried(t *testing.T) *countingCanaryRunner {
	t.Helper()
	r := &countingCanaryRunner{chains: map[string]bool{}}
	if err := EnsureCanary(r); err != nil {
		t.Fatal(err)
	}
	for _, table := range CanaryTables {
		if !r.chains[table+"/"+chains.ProxyCanary] {
			t.Fatalf("EnsureCanary left table %s without the canary", table)
		}
	}
	return r
}

// TestCanaryCheckIsOneCommand: a canary check costs what upstream's
// Monitor's does, one look at the first table (mangle), however many
// tables hold a canary.
func TestCanaryCheckIsOneCommand(t *testing.T) {
	r := newCanaried(t)
	missing, err := CanaryMissing(r)
	if err != nil || missing {
		t.Fatalf("CanaryMissing = %v, %v; want false, nil", missing, err)
	}
	if len(r.checks) != 1 || r.checks[0] != TableMangle {
		t.Fatalf("checks = %v, want one, of %s", r.checks, TableMangle)
	}
}

// TestCanaryMissingWhenMangleIsFlushed: the canary counts as gone when the
// first table lost it; the other tables are not looked at.
func TestCanaryMissingWhenMangleIsFlushed(t *testing.T) {
	r := newCanaried(t)
	delete(r.chains, TableMangle+"/"+chains.ProxyCanary)
	missing, err := CanaryMissing(r)
	if err != nil || !missing {
		t.Fatalf("CanaryMissing = %v, %v; want true, nil", missing, err)
	}
	if len(r.checks) != 1 {
		t.Fatalf("checks = %v, want one", r.checks)
	}
}

// TestCanaryNatAloneFlushedIsNotChecked: as upstream, a flush of the nat
// table alone (mangle's canary still there) is not what the check looks
// for.
func TestCanaryNatAloneFlushedIsNotChecked(t *testing.T) {
	r := newCanaried(t)
	delete(r.chains, TableNAT+"/"+chains.ProxyCanary)
	if missing, err := CanaryMissing(r); err != nil || missing {
		t.Fatalf("CanaryMissing = %v, %v; want false, nil (upstream watches mangle only)", missing, err)
	}
}
