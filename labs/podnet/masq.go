package podnet

import "fmt"

// FlannelMasqRules are the rules flanneld installs with --ip-masq (its
// FLANNEL-POSTRTG chain, from pkg/trafficmngr/iptables masqRules, on an
// iptables that has --random-fully) and its FORWARD rules (FLANNEL-FWD).
// 0x4000/0x4000 is kube-proxy's masquerade mark: traffic kube-proxy will
// masquerade itself is left alone.
func FlannelMasqRules(cluster, podCIDR string) string {
	return flannelMasqRules(cluster, podCIDR, "224.0.0.0/4")
}

// FlannelMasqIP6Rules are flanneld's IPv6 rules (masqIP6Rules, loaded
// with ip6tables-restore): FlannelMasqRules' with IPv6's multicast block.
func FlannelMasqIP6Rules(cluster, podCIDR string) string {
	return flannelMasqRules(cluster, podCIDR, "ff00::/8")
}

func flannelMasqRules(cluster, podCIDR, multicast string) string {
	const masq = `-m comment --comment "flanneld masq"`
	const fwd = `-m comment --comment "flanneld forward"`
	return fmt.Sprintf(`*nat
:FLANNEL-POSTRTG - [0:0]
-A POSTROUTING %[3]s -j FLANNEL-POSTRTG
-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 %[3]s -j RETURN
-A FLANNEL-POSTRTG -s %[2]s -d %[1]s %[3]s -j RETURN
-A FLANNEL-POSTRTG -s %[1]s -d %[2]s %[3]s -j RETURN
-A FLANNEL-POSTRTG ! -s %[1]s -d %[2]s %[3]s -j RETURN
-A FLANNEL-POSTRTG -s %[1]s ! -d %[5]s %[3]s -j MASQUERADE --random-fully
-A FLANNEL-POSTRTG ! -s %[1]s -d %[1]s %[3]s -j MASQUERADE --random-fully
COMMIT
*filter
:FLANNEL-FWD - [0:0]
-A FORWARD %[4]s -j FLANNEL-FWD
-A FLANNEL-FWD -s %[1]s %[4]s -j ACCEPT
-A FLANNEL-FWD -d %[1]s %[4]s -j ACCEPT
COMMIT
`, cluster, podCIDR, masq, fwd, multicast)
}

// CalicoNATOutgoingRules imitate Felix's natOutgoing for the IP pool:
// traffic from pods to anything outside the pool is masqueraded. Felix
// matches ipsets of all pools (cali40masq-ipam-pools, cali40all-ipam-pools);
// a lab has one pool, so plain CIDRs say the same.
func CalicoNATOutgoingRules(pool string) string {
	return fmt.Sprintf(`*nat
:cali-nat-outgoing - [0:0]
-A POSTROUTING -m comment --comment "svclab: calico natOutgoing" -j cali-nat-outgoing
-A cali-nat-outgoing -s %[1]s ! -d %[1]s -m comment --comment "svclab: calico natOutgoing" -j MASQUERADE --random-fully
COMMIT
`, pool)
}
