package model

import (
	corev1 "k8s.io/api/core/v1"
)

// ServicePortName identifies one port of one Service: the key under which
// the proxy tracks it.
//
// Upstream: proxy.ServicePortName (pkg/proxy/types.go).
type ServicePortName struct {
	Namespace string
	Name      string
	// Port is the name of the port in the Service spec; "" for an unnamed
	// (single) port.
	Port     string
	Protocol corev1.Protocol
}

// String gives "namespace/name:port", or "namespace/name" when the port is
// unnamed, exactly as current upstream does. This string is hashed into the
// iptables chain names and appears in rule comments.
//
// Older kube-proxy releases (before the EndpointSlice rewrite) always wrote
// "namespace/name:" with a trailing colon for unnamed ports, which is why
// 2017-era articles show different chain hashes for unnamed ports.
func (n ServicePortName) String() string {
	s := n.Namespace + "/" + n.Name
	if n.Port != "" {
		s += ":" + n.Port
	}
	return s
}

// Compare orders names by namespace, name, port name and protocol. It returns
// -1, 0 or +1 like strings.Compare. Snapshot.ServicePorts is sorted by it.
func (n ServicePortName) Compare(o ServicePortName) int {
	if c := compareStrings(n.Namespace, o.Namespace); c != 0 {
		return c
	}
	if c := compareStrings(n.Name, o.Name); c != 0 {
		return c
	}
	if c := compareStrings(n.Port, o.Port); c != 0 {
		return c
	}
	return compareStrings(string(n.Protocol), string(o.Protocol))
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
