package trace

import (
	"net/netip"

	"github.com/svclab/svclab/labs/agents/conntrack"
)

// MethodCounters is the only way this package finds matched rules: the
// packet counters of `iptables-save -c` in each node's namespace, read
// before and after the connection.
const MethodCounters = "counter-deltas"

// Capture is what the kernel showed about one connection: the raw material
// Analyze turns into a Result. It is plain data, so tests build it by hand
// (testdata/*.capture.json).
type Capture struct {
	Lab    string         `json:"lab"`
	Method string         `json:"method"`
	Proto  string         `json:"proto"` // tcp or udp
	From   string         `json:"from"`
	To     netip.AddrPort `json:"to"`
	// Source is the connection's local address on From.
	Source netip.AddrPort `json:"source"`
	// Answer is what the server said (a netexec server's hostname), if any.
	Answer string `json:"answer,omitempty"`
	// Error is why the connection failed, if it did.
	Error string `json:"error,omitempty"`
	// ProxyMode is the lab's proxy mode (iptables or ipvs).
	ProxyMode string `json:"proxyMode"`
	// Hosts are the hosts the packet crossed, From first, in path order.
	Hosts []HostCapture `json:"hosts"`
}

// HostCapture is what one host of the path showed.
type HostCapture struct {
	Host      string `json:"host"`
	Namespace string `json:"namespace"`
	Role      string `json:"role"` // client, router, node or pod
	// Arrived is the packet as it reached this host (for From: as it left).
	Arrived Tuple `json:"arrived"`
	// Local is true where the packet's destination is the host's own address.
	Local bool `json:"local,omitempty"`
	// Route is how the host sent the packet on (nil where Local).
	Route *Route `json:"route,omitempty"`
	// Tables are iptables-save -c before and after, per table (nodes only).
	Tables []TableCapture `json:"tables,omitempty"`
	// Conntrack is this connection's entry in the host's table (nodes only;
	// nil when the table has none).
	Conntrack *conntrack.Flow `json:"conntrack,omitempty"`
	// IPVS is the virtual server the packet's destination matched and its
	// real servers (nodes in IPVS mode).
	IPVS *IPVSService `json:"ipvs,omitempty"`
}

// Tuple is a packet's addresses.
type Tuple struct {
	Src netip.AddrPort `json:"src"`
	Dst netip.AddrPort `json:"dst"`
}

// Route is the kernel's answer to `ip route get DST` in a host, and the
// host the next hop belongs to.
type Route struct {
	Dst     netip.Addr `json:"dst"`
	Gateway netip.Addr `json:"gateway,omitzero"`
	Dev     string     `json:"dev"`
	Src     netip.Addr `json:"src,omitzero"`
	// Neighbour is the next hop's link-layer address on Dev, if known.
	Neighbour string `json:"neighbour,omitempty"`
	// Next is the lab host that owns the next hop ("" if none does).
	Next string `json:"next"`
	// VXLAN is set when Dev is a VXLAN device.
	VXLAN *VXLANHop `json:"vxlan,omitempty"`
}

// VXLANHop is an encapsulation: the inner packet goes to the peer's VTEP
// address (its MAC from the neighbour table), the FDB sends that MAC to
// the peer node's underlay address.
type VXLANHop struct {
	Dev      string     `json:"dev"`
	VNI      int        `json:"vni"`
	Port     int        `json:"port"`
	Local    netip.Addr `json:"local"`    // this node's underlay address
	PeerVTEP netip.Addr `json:"peerVTEP"` // the gateway on Dev
	PeerMAC  string     `json:"peerMAC"`  // neighbour entry of PeerVTEP
	Remote   netip.Addr `json:"remote"`   // FDB dst of PeerMAC
}

// TableCapture is one table's `iptables-save -c` before and after.
type TableCapture struct {
	Table  string `json:"table"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// IPVSService is an IPVS virtual server and its real servers, as
// `ipvsadm -Ln` lists them.
type IPVSService struct {
	Virtual     string   `json:"virtual"`     // "TCP 192.168.16.73:30000 rr"
	RealServers []string `json:"realServers"` // "10.100.81.180:3000"
}
