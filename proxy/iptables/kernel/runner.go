package kernel

import "io"

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

// StreamedPayload is an iptables-restore payload that writes itself part by
// part (iptables.Result), so that a large one reaches iptables-restore
// without being joined into one buffer first.
type StreamedPayload interface {
	io.WriterTo
	// Payload joins the parts, to name a rejected line in the error.
	Payload() []byte
}

// StreamRestorer is a Runner that streams a payload instead of taking it
// joined (ExecRunner).
type StreamRestorer interface {
	RestoreStream(p StreamedPayload) error
}
