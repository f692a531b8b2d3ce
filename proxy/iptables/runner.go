package iptables

// Runner is the narrow interface to the kernel's iptables that a sync
// needs. ExecRunner implements it with the iptables binaries;
// iptablestest.FakeRunner implements it in memory for tests.
type Runner interface {
	// Restore applies a payload with `iptables-restore --noflush
	// --counters`: tables and chains it does not mention are left alone.
	// A rejected payload gives a *RestoreError.
	Restore(payload []byte) error
	// Save returns `iptables-save -t table`.
	Save(table string) ([]byte, error)
	// EnsureJump makes sure rule's target chain exists and that rule is in
	// its built-in chain, inserting it first in the chain if missing.
	EnsureJump(rule JumpRule) error
	// HasRandomFully reports whether MASQUERADE takes --random-fully.
	HasRandomFully() bool
}
