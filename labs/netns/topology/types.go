package topology

import (
	"net/netip"

	"github.com/svclab/svclab/labs/podnet"
)

// APIVersion and Kind are the only values a lab file may carry in its
// apiVersion and kind fields.
const (
	APIVersion = "svclab.dev/v1alpha1"
	Kind       = "Lab"
)

// MaxLabNameLen bounds metadata.name so that namespace names of the form
// svclab-<lab>.<host> stay readable.
const MaxLabNameLen = 20

// MaxHostNameLen bounds node and client names (a DNS label). Every name the
// kernel sees is derived within its limits: the namespace
// svclab-<lab>.<host> (at most 91 characters), and the router's port of the
// host, hashed when the name is longer than an interface name may be.
const MaxHostNameLen = 63

// Limits on a lab file, so that a mistaken or hostile one fails at once:
// its size, the number of hosts (which bounds the work of validation and
// planning), and the number of hosts on one subnet (each is a port of the
// router's bridge for that subnet, and a Linux bridge has at most 1023
// ports; building the 1024th would fail half-way).
const (
	MaxFileBytes      = 4 << 20
	MaxHosts          = 50000
	MaxHostsPerSubnet = 1023
)

// RouterName is the reserved host name of the lab's edge router; no node or
// client may use it.
const RouterName = "router"

// CNI names the networking flavour a lab imitates.
type CNI string

const (
	// CNIFlannelVXLAN is flannel with its vxlan backend: pods on a cni0
	// bridge, nodes joined by flannel.1.
	CNIFlannelVXLAN CNI = "flannel-vxlan"
	// CNICalicoProxyARP is Calico in VXLAN mode: routed cali* veths with
	// proxy ARP for 169.254.1.1, nodes joined by vxlan.calico.
	CNICalicoProxyARP CNI = "calico-proxyarp"
	// CNICanal is Calico's pod attachment with flannel's VXLAN overlay.
	CNICanal CNI = "canal"
)

// CNIs lists the known CNI flavours.
func CNIs() []CNI { return []CNI{CNIFlannelVXLAN, CNICalicoProxyARP, CNICanal} }

// ProxyMode is kube-proxy's mode.
type ProxyMode string

const (
	// ProxyModeIPTables is kube-proxy's iptables mode; an empty mode in a
	// file means this one.
	ProxyModeIPTables ProxyMode = "iptables"
	// ProxyModeIPVS is kube-proxy's ipvs mode.
	ProxyModeIPVS ProxyMode = "ipvs"
	// ProxyModeNFTables is kube-proxy's nftables mode.
	ProxyModeNFTables ProxyMode = "nftables"
)

// ProxyModes lists the known proxy modes.
func ProxyModes() []ProxyMode {
	return []ProxyMode{ProxyModeIPTables, ProxyModeIPVS, ProxyModeNFTables}
}

// IPTablesBackend selects which iptables binaries the lab uses.
type IPTablesBackend string

const (
	// BackendDefault uses whatever `iptables` is on the host.
	BackendDefault IPTablesBackend = ""
	// BackendLegacy uses iptables-legacy (x_tables).
	BackendLegacy IPTablesBackend = "legacy"
	// BackendNFT uses iptables-nft (nf_tables).
	BackendNFT IPTablesBackend = "nft"
)

// IPTablesBackends lists the known backends.
func IPTablesBackends() []IPTablesBackend {
	return []IPTablesBackend{BackendDefault, BackendLegacy, BackendNFT}
}

// RestoreCommand is the iptables-restore binary of the backend.
func (b IPTablesBackend) RestoreCommand() string {
	switch b {
	case BackendLegacy:
		return "iptables-legacy-restore"
	case BackendNFT:
		return "iptables-nft-restore"
	default:
		return "iptables-restore"
	}
}

// Command is the iptables binary of the backend.
func (b IPTablesBackend) Command() string {
	switch b {
	case BackendLegacy:
		return "iptables-legacy"
	case BackendNFT:
		return "iptables-nft"
	default:
		return "iptables"
	}
}

// Lab is a validated lab file.
type Lab struct {
	APIVersion string
	Kind       string
	Metadata   Metadata
	Spec       Spec
	// Source is where the lab came from (the path given to Load or the
	// source given to Parse); it prefixes error messages.
	Source string
}

// Metadata holds the lab's name.
type Metadata struct {
	// Name is a DNS label of at most MaxLabNameLen characters.
	Name string
}

// Spec is the lab's network description.
type Spec struct {
	CNI CNI
	// IPFamily is spec.ipFamily; empty means IPFamilyIPv4.
	IPFamily IPFamily
	// PodSubnet is the cluster CIDR of the primary family (PodSubnets[0]);
	// every node's PodCIDR lies inside it.
	PodSubnet netip.Prefix
	// PodSubnets are the cluster CIDRs, one per family of the lab, the
	// primary first (spec.podSubnet in kind's comma form,
	// "10.244.0.0/16,fd00:10:244::/56"; a family the file leaves out
	// takes kind's default, except in an ipv4 lab, which must write it).
	PodSubnets []netip.Prefix
	// ServiceSubnet is the range ClusterIPs of the primary family come
	// from (ServiceSubnets[0]).
	ServiceSubnet netip.Prefix
	// ServiceSubnets are the Service ranges, one per family, the primary
	// first, as PodSubnets.
	ServiceSubnets []netip.Prefix
	Proxy          Proxy
	// Nodes are the Kubernetes nodes, in file order; there is at least one.
	Nodes []Node
	// Clients are hosts outside the cluster, in file order.
	Clients []Client
	// LoadBalancer is the lab's load balancer for LoadBalancer Services.
	LoadBalancer LoadBalancer
	// ExternalIPs are the blocks the lab's router sends to the cluster
	// for Services' spec.externalIPs (an administrator's static routes).
	ExternalIPs []netip.Prefix
}

// LoadBalancer is the lab's load balancer: it hands addresses of Pool to
// LoadBalancer Services (status.loadBalancer.ingress), as MetalLB does from
// an IPAddressPool, and the lab's router sends the pool to the cluster.
type LoadBalancer struct {
	// Pool is the zero podnet.AddrRange when the lab declares none: a
	// LoadBalancer Service then stays pending, as on a cluster without a
	// load balancer.
	Pool podnet.AddrRange
}

// MaxPoolAddrs bounds spec.loadBalancer.pool (a /16): allocation looks
// for the lowest free address.
const MaxPoolAddrs = 1 << 16

// Proxy configures kube-proxy.
type Proxy struct {
	// Mode is never empty after Parse: an empty mode becomes
	// ProxyModeIPTables.
	Mode            ProxyMode
	IPTablesBackend IPTablesBackend
}

// Node is a Kubernetes node.
type Node struct {
	Name string
	// IP is the node's address together with its subnet length, e.g.
	// 192.168.16.73/20: IP.Addr() is the address, IP.Masked() the subnet.
	IP netip.Prefix
	// IPs are the node's addresses, one per family of the lab, the
	// primary first (IPs[0] is IP). The lab file writes them in the ip
	// field, comma-separated; an IPv6 one it leaves out is derived from
	// the IPv4 one (DeriveIPv6HostIP).
	IPs []netip.Prefix
	// PodCIDR is the node's share of PodSubnet (a network address).
	PodCIDR netip.Prefix
	// PodCIDRs are the node's pod ranges, one per family, the primary
	// first (PodCIDRs[0] is PodCIDR): a /64 of the IPv6 pod subnet, which
	// the lab file may leave out (derived from the IPv4 range's place in
	// its subnet, see deriveIPv6PodCIDR).
	PodCIDRs []netip.Prefix
}

// Client is a host outside the cluster.
type Client struct {
	Name string
	// IP is the client's address together with its subnet length.
	IP netip.Prefix
	// IPs are the client's addresses, one per family, the primary first,
	// as a node's.
	IPs []netip.Prefix
}

// HostRole tells nodes from clients.
type HostRole string

const (
	RoleNode   HostRole = "node"
	RoleClient HostRole = "client"
)

// Host is a node or a client seen through what they have in common.
type Host struct {
	Name string
	Role HostRole
	IP   netip.Prefix
	// IPs are the host's addresses, one per family, primary first.
	IPs []netip.Prefix
}

// Name is the lab's name (metadata.name).
func (l *Lab) Name() string { return l.Metadata.Name }

// Node returns the node called name.
func (l *Lab) Node(name string) (Node, bool) {
	for _, n := range l.Spec.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

// Hosts lists the nodes, then the clients, in file order.
func (l *Lab) Hosts() []Host {
	hosts := make([]Host, 0, len(l.Spec.Nodes)+len(l.Spec.Clients))
	for _, n := range l.Spec.Nodes {
		hosts = append(hosts, Host{Name: n.Name, Role: RoleNode, IP: n.IP, IPs: n.IPs})
	}
	for _, c := range l.Spec.Clients {
		hosts = append(hosts, Host{Name: c.Name, Role: RoleClient, IP: c.IP, IPs: c.IPs})
	}
	return hosts
}

// RestoreCommandIPv6 is the ip6tables-restore binary of the backend.
func (b IPTablesBackend) RestoreCommandIPv6() string {
	switch b {
	case BackendLegacy:
		return "ip6tables-legacy-restore"
	case BackendNFT:
		return "ip6tables-nft-restore"
	default:
		return "ip6tables-restore"
	}
}
