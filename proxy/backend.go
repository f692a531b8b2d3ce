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
