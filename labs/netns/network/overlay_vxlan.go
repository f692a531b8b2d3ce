package network

// vxlanSteps are what flannel's vxlan backend and Calico's VXLAN mode both
// program on a node: the VTEP, and for every peer node a route to its pods
// through the peer's VTEP address, a permanent ARP entry for that address,
// and a permanent FDB entry that sends the peer's MAC to its node address.
//
//	ip -n <node> link add flannel.1 address <mac> mtu 1450 type vxlan id 1 local 192.168.16.73 dev eth0 dstport 8472 nolearning
//	ip -n <node> addr add 10.100.40.0/32 dev flannel.1
//	ip -n <node> link set dev flannel.1 up
//	ip -n <node> neigh add 10.100.81.0 lladdr <peer mac> dev flannel.1 nud permanent
//	bridge -n <node> fdb add <peer mac> dev flannel.1 dst 192.168.16.139 self permanent
//	ip -n <node> route add 10.100.81.0/24 via 10.100.81.0 dev flannel.1 onlink
//
// An IPv6 VTEP (flannel-v6.1, vxlan-v6.calico) is the same with IPv6
// addresses: a /128, NDP entries, the peers' IPv6 underlay addresses.
func vxlanSteps(self *Host, v VTEP, peers []*Host) []Step {
	ns := self.Namespace
	steps := []Step{
		AddVxlan{NS: ns, Name: v.Device, VNI: v.VNI, Port: v.Port, Local: v.Local, Dev: "eth0", MTU: v.MTU, MAC: v.MAC},
		AddAddr{NS: ns, Link: v.Device, Addr: hostPrefix(v.Addr)},
		LinkUp{NS: ns, Link: v.Device},
	}
	if v.Addr.Is6() {
		// The IPv6 VTEP address goes through DAD (flannel and Felix add it
		// without nodad): until it is over, the node's source address
		// towards its pods is another one, and a MASQUERADE during those
		// seconds picks a different address than after (seen on an ipv6
		// lab's first connections). The lab is up once it has settled.
		steps = append(steps, WaitDAD{NS: ns, Link: v.Device})
	}
	for _, peer := range peers {
		pv, ok := peer.Node.vtepOf(v.Addr)
		if !ok {
			continue
		}
		i, _ := peer.Node.familyIndex(v.Addr)
		steps = append(steps,
			AddNeigh{NS: ns, Dev: v.Device, IP: pv.Addr, MAC: pv.MAC},
			AddFDB{NS: ns, Dev: v.Device, MAC: pv.MAC, Dst: pv.Local},
			AddRoute{NS: ns, Dst: peer.Node.PodCIDRs[i], Gw: pv.Addr, Dev: v.Device, OnLink: true},
		)
	}
	return steps
}
