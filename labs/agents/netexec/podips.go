package netexec

import (
	"fmt"
	"net"
	"net/netip"
)

// discoverPodIPs lists this network namespace's global unicast addresses,
// IPv4 first: in a lab pod, the pod IPs. Loopback and link-local addresses
// are left out.
func discoverPodIPs() ([]string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("listing interface addresses: %w", err)
	}
	var v4, v6 []string
	for _, a := range addrs {
		prefix, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		ip := prefix.Addr()
		if !ip.IsGlobalUnicast() {
			continue
		}
		if ip.Is4() {
			v4 = append(v4, ip.String())
		} else {
			v6 = append(v6, ip.String())
		}
	}
	return append(v4, v6...), nil
}
