package iptables

import (
	"bytes"
	"io"
)

// Result is one rendered payload and what went into it.
type Result struct {
	// parts are the payload's pieces in order — the fixed sections and the
	// service ports' cached fragments, which are never written again once
	// rendered — so that the payload is streamed to iptables-restore
	// (WriteTo) without being copied into one buffer first: at 10000
	// services that buffer is 33 MB, and copying into fresh memory was most
	// of a full sync's time.
	parts [][]byte
	size  int
	// joined caches Payload.
	joined []byte
	// FullSync is true when the payload rewrites every service chain; false
	// when it rewrites only the service ports that changed since the last
	// applied payload, and the shared chains when they changed.
	FullSync bool
	// FilterTable is true when the payload rewrites the filter table's
	// chains, SharedNATChains when it rewrites nat's KUBE-SERVICES,
	// KUBE-NODEPORTS, KUBE-POSTROUTING and KUBE-MARK-MASQ: always on a full
	// sync and on a partial one with nothing else to write (upstream
	// rewrites them on every sync, which repairs them), otherwise only when
	// a service port's rules in them changed.
	FilterTable, SharedNATChains bool

	// ServicePorts and Endpoints count the snapshot.
	ServicePorts int
	Endpoints    int
	// ChangedServicePorts is how many service ports had their own chains
	// written (all of them on a full sync).
	ChangedServicePorts int
	// NATChains is the number of per-service nat chains (SVC, SVL, EXT, FW,
	// SEP) that exist once the payload is applied.
	NATChains int
	// DeletedChains are the nat chains the payload deletes, sorted.
	DeletedChains []string
	// FilterRules and NATRules count the rule lines in the payload.
	FilterRules int
	NATRules    int
	// LargeCluster is true when the snapshot has more than 1000 endpoints
	// and per-endpoint comments were left out, as upstream does.
	LargeCluster bool

	fragments []*fragment
}

// Bytes is the payload's length.
func (r *Result) Bytes() int { return r.size }

// Payload is the iptables-restore input: a *filter and a *nat section,
// each ending in COMMIT, meant for `iptables-restore --noflush`. It is
// joined on the first call (Sync streams the parts instead).
func (r *Result) Payload() []byte {
	if r.joined == nil {
		r.joined = bytes.Join(r.parts, nil)
	}
	return r.joined
}

// WriteTo writes the payload to w, part by part.
func (r *Result) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, p := range r.parts {
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
