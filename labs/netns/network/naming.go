package network

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
)

// NamespacePrefix starts the name of every namespace svclab creates.
const NamespacePrefix = "svclab-"

// NamespaceSeparator ends the lab's name in a namespace name. A lab name
// is a DNS-1123 label, which never holds a dot, so the first dot after the
// prefix ends it and no two (lab, host) pairs share a name: lab "a" with pod
// "b-c" is svclab-a.b-c, lab "a-b" with host "c" is svclab-a-b.c (with "-"
// both were svclab-a-b-c). A host's own dots (a pod name is a DNS
// subdomain) come after the first and change nothing.
//
// iproute2 takes any file name as a namespace's (/run/netns/NAME): not
// empty, "." or "..", no "/", at most NAME_MAX (255) bytes. The longest
// svclab makes is 7+20+1+63 = 91 bytes (topology.MaxLabNameLen, a host or
// pod name of at most 63).
const NamespaceSeparator = "."

// maxIfName is the longest interface name Linux accepts (IFNAMSIZ - 1).
const maxIfName = 15

// NamespaceName is the network namespace of host (a node, a client, a pod
// or "router") in lab: svclab-<lab>.<host>.
func NamespaceName(lab, host string) string {
	return labPrefix(lab) + host
}

// SplitNamespaceName is NamespaceName's inverse: the lab and host of a
// name svclab-<lab>.<host>; ok is false for any other name.
func SplitNamespaceName(ns string) (lab, host string, ok bool) {
	rest, ok := strings.CutPrefix(ns, NamespacePrefix)
	if !ok {
		return "", "", false
	}
	lab, host, ok = strings.Cut(rest, NamespaceSeparator)
	if !ok || lab == "" || host == "" {
		return "", "", false
	}
	return lab, host, true
}

// RouterNamespace is the namespace of lab's edge router.
func RouterNamespace(lab string) string { return NamespaceName(lab, "router") }

// labPrefix starts the names of all of lab's namespaces, and of no other
// lab's: svclab-<lab>.
func labPrefix(lab string) string { return NamespacePrefix + lab + NamespaceSeparator }

// lanBridgeName is the router's bridge for the i-th distinct host subnet.
func lanBridgeName(i int) string { return fmt.Sprintf("lan%d", i) }

// routerPortName is the router's end of host's eth0 veth: the host's name
// when it is a valid interface name that the router does not use itself,
// otherwise "veth" and 8 hex characters of a hash of the name.
func routerPortName(host string, taken map[string]bool) string {
	if len(host) <= maxIfName && !taken[host] {
		return host
	}
	return "veth" + hashHex("router-port/"+host, 8)
}

// BridgeVethName is the node-side end of a pod's veth with the bridge
// attachment: "veth" and 8 hex characters (flannel's bridge plugin uses 8
// random ones; here they come from a hash so that the plan is reproducible).
func BridgeVethName(podNamespace, pod string) string {
	return "veth" + hashHex(podNamespace+"/"+pod, 8)
}

// vtepMAC is a stable, locally administered unicast MAC for the VXLAN
// device dev of node (flannel and Calico pick random ones and publish them;
// a lab has no control plane, so the MAC is derived).
func vtepMAC(node, dev string) net.HardwareAddr {
	sum := sha1.Sum([]byte("vtep/" + dev + "/" + node))
	mac := net.HardwareAddr(sum[:6])
	mac[0] = mac[0]&^0x01 | 0x02
	return mac
}

// podBridgeMAC is the fixed MAC of node's pod bridge. The bridge plugin
// pins cni0's MAC once it has its address ("Set the bridge's MAC to
// itself. Otherwise, the bridge will take the lowest-numbered mac on the
// bridge, and will change as ifs churn"); a lab derives it, as it does the
// VTEP MACs, so that the plan stays reproducible.
func podBridgeMAC(node string) net.HardwareAddr {
	sum := sha1.Sum([]byte("bridge/" + PodBridge + "/" + node))
	mac := net.HardwareAddr(sum[:6])
	mac[0] = mac[0]&^0x01 | 0x02
	return mac
}

func hashHex(s string, n int) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// tag is what a lab namespace says about itself, kept as the alias of its
// lo interface: "svclab lab=<lab> role=<role>[ node=<node>]".
type tag struct {
	Lab  string
	Role string // router, node, client or pod
	Node string // for pods: the node they are attached to
}

const tagMagic = "svclab"

func (t tag) String() string {
	s := tagMagic + " lab=" + t.Lab + " role=" + t.Role
	if t.Node != "" {
		s += " node=" + t.Node
	}
	return s
}

// parseTag reads an alias written by tag.String; ok is false for any other.
func parseTag(alias string) (t tag, ok bool) {
	fields := strings.Fields(alias)
	if len(fields) < 2 || fields[0] != tagMagic {
		return tag{}, false
	}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "lab":
			t.Lab = v
		case "role":
			t.Role = v
		case "node":
			t.Node = v
		}
	}
	return t, t.Lab != ""
}
