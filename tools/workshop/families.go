package workshop

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Families are the facts of a lab's two IP families (an ipv6 or dual lab):
// every address of a Service, a pod or a host, the primary first, as
// spec.clusterIPs, status.podIPs and a host's addresses list them.
type Families interface {
	// ClusterIPs are the Service's spec.clusterIPs.
	ClusterIPs(namespace, name string) ([]string, error)
	// PodIPs are the pod's status.podIPs.
	PodIPs(pod string) ([]string, error)
	// HostIPs are a node's or client's LAN addresses.
	HostIPs(host string) ([]string, error)
}

// familyFuncs are the template functions of Families:
//
//	clusterIPOf NS NAME FAMILY   the Service's cluster IP of FAMILY (IPv4 or IPv6)
//	podIPOf POD FAMILY           the pod's address of FAMILY
//	hostIPOf HOST FAMILY         the host's LAN address of FAMILY
//	hostPort ADDR PORT           ADDR:PORT, [ADDR]:PORT for an IPv6 address
func familyFuncs(f Families) map[string]any {
	return map[string]any{
		"clusterIPOf": func(ns, name, family string) (string, error) {
			ips, err := f.ClusterIPs(ns, name)
			return ofFamily(ips, err, family, "Service "+ns+"/"+name)
		},
		"podIPOf": func(pod, family string) (string, error) {
			ips, err := f.PodIPs(pod)
			return ofFamily(ips, err, family, "pod "+pod)
		},
		"hostIPOf": func(host, family string) (string, error) {
			ips, err := f.HostIPs(host)
			return ofFamily(ips, err, family, "host "+host)
		},
		"hostPort": func(addr string, port any) string { return net.JoinHostPort(addr, fmt.Sprint(port)) },
	}
}

// ofFamily is the address of family (IPv4 or IPv6, as Kubernetes spells
// them) among ips, those of what.
func ofFamily(ips []string, err error, family, what string) (string, error) {
	if err != nil {
		return "", err
	}
	var want6 bool
	switch family {
	case "IPv4":
	case "IPv6":
		want6 = true
	default:
		return "", fmt.Errorf("family %q: want IPv4 or IPv6", family)
	}
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err == nil && (a.Is6() && !a.Is4In6()) == want6 {
			return s, nil
		}
	}
	return "", fmt.Errorf("%s has no %s address (it has %s)", what, family, strings.Join(ips, ", "))
}
