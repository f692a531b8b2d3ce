package trace

import "net/netip"

// Result is one traced connection, as svclab trace prints it.
type Result struct {
	Lab       string         `json:"lab"`
	Proto     string         `json:"proto"`
	From      string         `json:"from"`
	To        netip.AddrPort `json:"to"`
	Source    netip.AddrPort `json:"source"`
	ProxyMode string         `json:"proxyMode"`
	Answer    string         `json:"answer,omitempty"`
	Error     string         `json:"error,omitempty"`
	// Method says how matched rules were found, and what that can miss.
	Method     string  `json:"method"`
	MethodNote string  `json:"methodNote"`
	Hops       []Hop   `json:"hops"`
	Summary    Summary `json:"summary"`
}

// Hop is one host of the path and what happened to the packet there.
type Hop struct {
	Host      string `json:"host"`
	Namespace string `json:"namespace"`
	Role      string `json:"role"`
	Arrived   Tuple  `json:"arrived"`
	// Rules are the rules whose counters grew, in the order a packet meets
	// them (built-in chains in hook order, a jump's chain after the jump).
	Rules []RuleHit `json:"rules,omitempty"`
	// Unchecked are chains whose rules changed between the two readings.
	Unchecked []string `json:"unchecked,omitempty"`
	// Conntrack is the connection's entry here, as conntrack -L prints it.
	Conntrack string       `json:"conntrack,omitempty"`
	DNAT      *Rewrite     `json:"dnat,omitempty"`
	SNAT      *Rewrite     `json:"snat,omitempty"`
	IPVS      *IPVSService `json:"ipvs,omitempty"`
	// RealServer is the IPVS real server conntrack's reply tuple names.
	RealServer string `json:"realServer,omitempty"`
	Local      bool   `json:"local,omitempty"`
	Route      *Route `json:"route,omitempty"`
	// Notes say what the kernel did not show here.
	Notes []string `json:"notes,omitempty"`
}

// RuleHit is a rule whose packet counter grew.
type RuleHit struct {
	Table   string `json:"table"`
	Chain   string `json:"chain"`
	Index   int    `json:"index"` // 0: the chain's policy
	Spec    string `json:"spec"`
	Packets uint64 `json:"packets"`
	// Depth is how many jumps led here from a built-in chain.
	Depth int `json:"depth"`
}

// Rewrite is a NAT translation conntrack recorded.
type Rewrite struct {
	From netip.AddrPort `json:"from"`
	To   netip.AddrPort `json:"to"`
	// By is the chain whose rule did it, where the counters and conntrack
	// agree (a KUBE-SEP chain for DNAT, the MASQUERADE rule's chain for SNAT).
	By string `json:"by,omitempty"`
}

// Summary is what a reader asks first.
type Summary struct {
	// Reached is the host the connection ended in.
	Reached string `json:"reached,omitempty"`
	// ServiceChains are the KUBE-SVC-/KUBE-EXT-/KUBE-FW-/KUBE-SVL- chains matched.
	ServiceChains []string `json:"serviceChains,omitempty"`
	// EndpointChains are the KUBE-SEP- chains matched.
	EndpointChains []string `json:"endpointChains,omitempty"`
	// ConfirmedSEP is the KUBE-SEP chain whose DNAT target is the endpoint
	// in conntrack's reply tuple, and Endpoint that endpoint.
	ConfirmedSEP string         `json:"confirmedSEP,omitempty"`
	Endpoint     netip.AddrPort `json:"endpoint,omitzero"`
	// RealServer is the IPVS real server (IPVS mode).
	RealServer string `json:"realServer,omitempty"`
	// Masquerade is the source address a node gave the connection, and the node.
	Masquerade   netip.Addr `json:"masquerade,omitzero"`
	MasqueradeOn string     `json:"masqueradeOn,omitempty"`
	// VXLAN are the encapsulations on the way.
	VXLAN []VXLANSummary `json:"vxlan,omitempty"`
}

// VXLANSummary is one VXLAN hop: from which node, over which device, to which.
type VXLANSummary struct {
	From string `json:"from"`
	To   string `json:"to"`
	VXLANHop
}
