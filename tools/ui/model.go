package ui

// State is what GET /api/state returns: the lab as the page shows it.
type State struct {
	Lab string `json:"lab"`
	// Generation is the lab store's generation: it changes with every apply.
	Generation int64 `json:"generation"`
	// Client is the host traffic is sent from.
	Client string `json:"client"`
	// Topology is labs/netns/graph's SVG of the lab.
	Topology string       `json:"topology"`
	Nodes    []NodeView   `json:"nodes"`
	Services []ServiceRef `json:"services"`
	Trace    TraceView    `json:"trace"`
	// Traffic is the last traffic run of this page's server, if any.
	Traffic *TrafficView `json:"traffic,omitempty"`
}

// NodeView is one node: its proxy's mode and what the kernel holds.
type NodeView struct {
	Name string `json:"name"`
	// Mode and Backend are what the node's proxy last reported.
	Mode    string `json:"mode"`
	Backend string `json:"backend,omitempty"`
	Healthy bool   `json:"healthy"`
	// Error is the proxy's last error, or why the kernel could not be read.
	Error string `json:"error,omitempty"`
	// Chains are the nat table's KUBE chains with their counters (iptables
	// mode); VirtualServers the IPVS services with theirs (ipvs mode).
	Chains         []Chain         `json:"chains,omitempty"`
	VirtualServers []VirtualServer `json:"virtualServers,omitempty"`
}

// Kernel is what one node's kernel holds for Services, as the page shows
// it in the node's NodeView.
type Kernel struct {
	Chains         []Chain
	VirtualServers []VirtualServer
	// Error says why the kernel could not be read.
	Error string
}

// Chain is one iptables chain as iptables-save -c prints it.
type Chain struct {
	Name string `json:"name"`
	// Family is FamilyIPv6 for a chain of ip6tables-save; empty for
	// iptables-save's (IPv4).
	Family string `json:"family,omitempty"`
	Rules  []Rule `json:"rules"`
}

// FamilyIPv6 marks what belongs to IPv6 on a page that may show both
// families (Chain.Family, ServiceRef.Family).
const FamilyIPv6 = "IPv6"

// FamilyIPv4 marks an IPv4 ServiceRef of a dual-stack Service.
const FamilyIPv4 = "IPv4"

// Rule is one rule and its counters.
type Rule struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
	// Spec is the rule without "-A CHAIN" and without its comment.
	Spec string `json:"spec"`
	// Comment is the rule's -m comment text, if any.
	Comment string `json:"comment,omitempty"`
	// Target is the chain or target it jumps (-j) or goes (-g) to.
	Target string `json:"target,omitempty"`
}

// VirtualServer is one IPVS virtual server and its real servers, with the
// counters of ipvsadm --stats.
type VirtualServer struct {
	Protocol string       `json:"protocol"`
	Address  string       `json:"address"`
	Stats    IPVSStats    `json:"stats"`
	Real     []RealServer `json:"real"`
}

// RealServer is one real server of a virtual server.
type RealServer struct {
	Address string    `json:"address"`
	Stats   IPVSStats `json:"stats"`
}

// IPVSStats are ipvsadm's --stats columns.
type IPVSStats struct {
	Conns    uint64 `json:"conns"`
	InPkts   uint64 `json:"inPkts"`
	OutPkts  uint64 `json:"outPkts"`
	InBytes  uint64 `json:"inBytes"`
	OutBytes uint64 `json:"outBytes"`
}

// ServiceRef is a Service port traffic can be sent to.
type ServiceRef struct {
	// Key names it in a POST: "NAMESPACE/NAME:PORT" for the Service's
	// primary cluster IP, "NAMESPACE/NAME:PORT (IPv6)" (or "(IPv4)") for
	// the other one of a dual-stack Service.
	Key string `json:"key"`
	// Target is the ClusterIP:port the connections go to ("[IPv6]:port").
	Target string `json:"target"`
	// Family is the cluster IP's family, FamilyIPv4 or FamilyIPv6, for a
	// Service with a cluster IP of each; empty for a single-stack one.
	Family string `json:"family,omitempty"`
}

// TraceView is the last trace the lab's store holds.
type TraceView struct {
	// Present says whether last-trace.svg exists; the page then loads it
	// from /api/trace.svg (as an image: it runs no script).
	Present bool `json:"present"`
	// Modified changes when the trace does (RFC 3339 nanoseconds), so the
	// page reloads the picture.
	Modified string `json:"modified,omitempty"`
}

// TrafficView is the outcome of a traffic run from the page.
type TrafficView struct {
	Service string `json:"service"`
	Target  string `json:"target"`
	From    string `json:"from"`
	Count   int    `json:"count"`
	Verdict string `json:"verdict"`
	// Summary is the report's verdict line.
	Summary string `json:"summary"`
	// SVG is the split drawn by labs/agents/traffic/bars.
	SVG string `json:"svg"`
}
