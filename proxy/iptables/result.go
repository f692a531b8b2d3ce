package iptables

// Result is one rendered payload and what went into it.
type Result struct {
	// Payload is the iptables-restore input: a *filter and a *nat section,
	// each ending in COMMIT, meant for `iptables-restore --noflush`.
	Payload []byte
	// FullSync is true when the payload rewrites every service chain; false
	// when it rewrites only the shared chains and the service ports that
	// changed since the last applied payload.
	FullSync bool

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

// Bytes is len(Payload).
func (r *Result) Bytes() int { return len(r.Payload) }
