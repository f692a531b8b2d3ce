package ipvs

import (
	"bytes"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// Desired is the kernel state a snapshot calls for. Every list is sorted,
// so two Desired values for the same input are identical.
type Desired struct {
	// Family is the proxier's IP family ("" is IPv4): every address is of
	// it, the sets are its (KUBE-6-* for IPv6) and IPTables is for
	// ip6tables-restore when it is IPv6.
	Family corev1.IPFamily
	// Addresses are bound to kube-ipvs0 (/32 or /128 each): cluster IPs, and
	// external and load balancer IPs that are not node addresses.
	Addresses []netip.Addr
	// VirtualServers are sorted by address, protocol and port.
	VirtualServers []DesiredVirtualServer
	// Sets are every ipset in Sets order, each with its members sorted.
	Sets []DesiredSet
	// IPTables is the iptables-restore payload (nat and filter).
	IPTables []byte
	// Jumps are the rules from built-in chains into the mode's chains.
	Jumps []JumpRule

	ServicePorts int
	Endpoints    int
}

// DesiredVirtualServer is one IPVS service with its real servers.
type DesiredVirtualServer struct {
	kernel.VirtualServer
	// Service is the service port it belongs to ("default/web:http").
	Service string
	// RealServers are sorted by address and port; all have weight 1.
	RealServers []kernel.RealServer
}

// DesiredSet is one ipset with its members.
type DesiredSet struct {
	SetSpec
	// Entries are in the ipset command's syntax, sorted.
	Entries []string
}

// Set returns the named set, by the IPv4 or the family's name (nil if it
// is not one of Sets).
func (d *Desired) Set(name string) *DesiredSet {
	i, ok := setIndex[name]
	if !ok || i >= len(d.Sets) {
		return nil
	}
	return &d.Sets[i]
}

// String renders the whole state the way a person would inspect it on a
// node, one section per tool (ip -6, ip6tables and KUBE-6-* sets for an
// IPv6 proxier):
//
//	# ip -4 addr show dev kube-ipvs0
//	10.96.0.10/32
//	# ipvsadm -S -n
//	-A -u 10.96.0.10:53 -s rr
//	-a -u 10.96.0.10:53 -r 10.244.1.5:53 -m -w 1
//	# ipset list KUBE-CLUSTER-IP (hash:ip,port)
//	10.96.0.10,udp:53
//	# iptables-restore
//	...
//
// The golden files under testdata hold this text.
func (d *Desired) String() string {
	var b bytes.Buffer
	b.WriteString("# ip " + ipCommandFlag(d.Family) + " addr show dev " + DummyDevice + "\n")
	for _, a := range d.Addresses {
		b.WriteString(netip.PrefixFrom(a, a.BitLen()).String() + "\n")
	}
	b.WriteString("# ipvsadm -S -n\n")
	for _, vs := range d.VirtualServers {
		b.WriteString(vs.VirtualServer.String() + "\n")
		for _, rs := range vs.RealServers {
			b.WriteString("-a " + vs.Target() + " " + rs.Describe() + "\n")
		}
	}
	for _, s := range d.Sets {
		b.WriteString("# ipset list " + s.Name + " (" + string(s.Type) + ")\n")
		for _, e := range s.Entries {
			b.WriteString(e + "\n")
		}
	}
	b.WriteString("# " + iptablesCommand(d.Family) + " (jumps from built-in chains)\n")
	for _, j := range d.Jumps {
		b.WriteString("-t " + j.Table + " -A " + j.Chain + " " + strings.Join(quoteArgs(j.Args()), " ") + "\n")
	}
	b.WriteString("# " + iptablesCommand(d.Family) + "-restore --noflush\n")
	b.Write(d.IPTables)
	return b.String()
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t") {
			a = `"` + a + `"`
		}
		out[i] = a
	}
	return out
}
