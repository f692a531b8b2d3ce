package report

// Result is one run of the data-plane benchmark: the machine, what was
// asked, and one Run per (mode, number of Services) that was measured or
// skipped, in the order they ran.
type Result struct {
	Machine Machine `json:"machine"`
	Config  Config  `json:"config"`
	Runs    []Run   `json:"runs"`
	// Stopped says why the benchmark ended before measuring everything
	// (its --timeout, an interrupt); empty when it finished.
	Stopped string `json:"stopped,omitempty"`
	// ElapsedMs is the wall-clock time of the whole benchmark.
	ElapsedMs float64 `json:"elapsedMs"`
}

// Machine says where the numbers come from.
type Machine struct {
	CPUs     int    `json:"cpus"`
	Kernel   string `json:"kernel"`
	IPTables string `json:"iptables,omitempty"` // `iptables -V` of the host
}

// Config is what the benchmark was asked to do.
type Config struct {
	Services    []int    `json:"services"`
	Modes       []string `json:"modes"`
	Connections int      `json:"connections"` // fresh TCP connections per target
	TimeoutMs   float64  `json:"timeoutMs"`
}

// Run is the measurement of one mode at one number of Services.
type Run struct {
	Mode     string `json:"mode"`
	Services int    `json:"services"`
	// Skipped says why this mode was not measured (no IPVS in the kernel,
	// a proxy that does not implement the mode, the timeout); the other
	// fields are then empty.
	Skipped string `json:"skipped,omitempty"`
	// Error is a measurement that started and failed.
	Error       string       `json:"error,omitempty"`
	Programming *Programming `json:"programming,omitempty"`
	Early       *Latency     `json:"early,omitempty"` // the first Service of the list
	Late        *Latency     `json:"late,omitempty"`  // the last Service of the list
	CPU         *CPU         `json:"cpu,omitempty"`
	// Notes say what dominates each number.
	Notes []string `json:"notes,omitempty"`
}

// Measured reports whether r holds numbers.
func (r Run) Measured() bool { return r.Skipped == "" && r.Error == "" && r.Programming != nil }

// Programming is the time from the apply of N Services with their
// endpoints to the last Service's rule being visible in the node's kernel.
type Programming struct {
	// TotalMs: from the start of the apply to the rule seen by the probe.
	TotalMs float64 `json:"totalMs"`
	// StoreMs: from the start of the apply to the objects being in the lab
	// store (decode, validation, EndpointSlice controller, store write):
	// the lab's API server, not the proxy.
	StoreMs float64 `json:"storeMs"`
	// ProxyMs: from the objects in the store to the rule in the kernel
	// (the proxy's read, render and kernel update).
	ProxyMs float64 `json:"proxyMs"`
	// TimedBy says where the end of the programming time comes from:
	// "proxy", the time the node's proxy reported its sync done (its
	// kernel update returned), taken when it is earlier than the probe's
	// sighting, which confirms it; or "probe", the probe's first sighting
	// of the rule.
	TimedBy string `json:"timedBy"`
	// ResolutionMs is, when TimedBy is "probe", the probe's last polling
	// interval: the times above may be late by up to this much.
	ResolutionMs float64 `json:"resolutionMs"`
	// RuleFound is true when the probe saw the rule.
	RuleFound bool `json:"ruleFound"`
	// Probe is the command whose output showed the rule.
	Probe string `json:"probe"`
	// KernelObjects counts what the kernel holds for the proxy after the
	// apply (iptables rules of the nat table, nftables elements and rules,
	// IPVS virtual and real servers), as the notes name them.
	KernelObjects int `json:"kernelObjects"`
}

// Latency is the TCP connect time of fresh connections to one Service.
type Latency struct {
	Service  string  `json:"service"` // namespace/name
	Target   string  `json:"target"`  // cluster IP:port
	From     string  `json:"from"`    // the pod that dialled
	N        int     `json:"n"`       // connections that succeeded
	Failures int     `json:"failures"`
	P50Ms    float64 `json:"p50Ms"`
	P99Ms    float64 `json:"p99Ms"`
	MaxMs    float64 `json:"maxMs"`
}

// CPU is the CPU time the node's proxy used from the start of the apply to
// the end of its sync: its own (utime+stime of /proc/PID/stat) and its
// children's (cutime+cstime: iptables-restore, ipset), in seconds, with
// the kernel's clock-tick resolution (usually 10 ms).
type CPU struct {
	ProxySeconds    float64 `json:"proxySeconds"`
	ChildrenSeconds float64 `json:"childrenSeconds"`
}

// TotalSeconds is the proxy's and its children's CPU time.
func (c CPU) TotalSeconds() float64 { return c.ProxySeconds + c.ChildrenSeconds }
