package proxy

import "github.com/svclab/svclab/proxy/model"

// Backend is one proxy mode: it makes the kernel match a snapshot.
type Backend interface {
	// Mode is what /proxyMode answers ("iptables").
	Mode() string
	// Describe says which kernel interface is used ("iptables 1.8.9 (nf_tables)").
	Describe() string
	// Sync makes the kernel match snap. After an error the backend's next
	// Sync must be a full one (nothing assumed about what the kernel holds).
	Sync(snap *model.Snapshot) (SyncStats, error)
}

// SyncStats describes one successful sync, for logs and metrics.
type SyncStats struct {
	Full         bool
	ServicePorts int
	Endpoints    int
	Bytes        int // size of what was written to the kernel
}

// FullSyncer is a Backend that remembers what it applied and sends only
// changes: ForceFullSync makes its next Sync rewrite everything (the
// periodic full resync, and the resync after its canary went missing).
// Optional: the loop asks for it with a type assertion.
type FullSyncer interface {
	ForceFullSync()
}

// Canaried is a Backend that keeps a canary in the kernel (an empty chain
// or table) to notice that someone else flushed its rules. Optional.
type Canaried interface {
	// CanaryMissing reports whether the canary is gone; the loop then
	// forces a full resync, whose Sync must put the canary back.
	CanaryMissing() (bool, error)
}
