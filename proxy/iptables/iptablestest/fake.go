package iptablestest

import (
	"errors"
	"fmt"
	"slices"

	"github.com/svclab/svclab/internal/iptsave"
	"github.com/svclab/svclab/proxy/iptables/kernel"
)

// FakeRunner is an in-memory kernel.Runner. Restore applies payloads
// with `iptables-restore --noflush` semantics and rejects what the kernel
// would: a rule in a chain that was neither declared nor existing, a jump
// to a missing chain, a target in the wrong table, deleting a chain that is
// not empty or still referenced, a table without COMMIT, an option the
// parser does not know. Like the real backends, each table is applied at
// its COMMIT, so an error in nat leaves an already committed filter section
// in place.
type FakeRunner struct {
	// RandomFully is what HasRandomFully reports.
	RandomFully bool
	// FailRestore, when set, makes Restore fail with it before looking at
	// the payload.
	FailRestore error

	dump *Dump
	// Restores records every payload given to Restore, accepted or not.
	Restores [][]byte
}

var _ kernel.Runner = (*FakeRunner)(nil)

// NewFakeRunner returns a fake holding the tables of a fresh network
// namespace.
func NewFakeRunner() *FakeRunner {
	return &FakeRunner{RandomFully: true, dump: NewDump()}
}

// Dump is the fake's current state. Read it, do not change it.
func (f *FakeRunner) Dump() *Dump { return f.dump }

// HasRandomFully implements kernel.Runner.
func (f *FakeRunner) HasRandomFully() bool { return f.RandomFully }

// Restore implements kernel.Runner. A rejected payload gives an
// *kernel.RestoreError whose Line is the offending payload line.
func (f *FakeRunner) Restore(payload []byte) error {
	f.Restores = append(f.Restores, slices.Clone(payload))
	if f.FailRestore != nil {
		return f.FailRestore
	}
	err := applyRestore(f.dump, payload, modeNoFlush)
	if err == nil {
		return nil
	}
	var le *iptsave.Error
	if errors.As(err, &le) {
		out := fmt.Sprintf("iptables-restore (fake): %v\nError occurred at line: %d\n", le.Err, le.Line)
		return kernel.NewRestoreError("iptables-restore (fake)", []byte(out), payload, err)
	}
	return err
}

// Save implements kernel.Runner.
func (f *FakeRunner) Save(table string) ([]byte, error) {
	t := f.dump.Tables[table]
	if t == nil {
		return nil, fmt.Errorf("iptables-save -t %s: table does not exist", table)
	}
	return []byte(t.Save()), nil
}

// EnsureJump implements kernel.Runner.
func (f *FakeRunner) EnsureJump(j kernel.JumpRule) error {
	t := f.dump.Tables[j.Table]
	if t == nil {
		return fmt.Errorf("jump %s -> %s: table %s does not exist", j.Chain, j.Target, j.Table)
	}
	chain := t.Chains[j.Chain]
	if chain == nil || !chain.Builtin {
		return fmt.Errorf("jump %s -> %s: %s is not a built-in chain of table %s", j.Chain, j.Target, j.Chain, j.Table)
	}
	if t.Chains[j.Target] == nil {
		t.Chains[j.Target] = &Chain{Name: j.Target, Policy: "-"}
	}
	rule, err := ParseRule(j.Chain, j.Args())
	if err != nil {
		return fmt.Errorf("jump %s -> %s: %w", j.Chain, j.Target, err)
	}
	for _, r := range chain.Rules {
		if r.Equal(rule) {
			return nil
		}
	}
	chain.Rules = append([]*Rule{rule}, chain.Rules...)
	return nil
}
