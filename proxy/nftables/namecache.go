package nftables

import (
	"net/netip"

	"github.com/svclab/svclab/proxy/model"
)

// portNameCache is one service port's names, hashed once while the port
// exists (upstream computes them once per servicePortInfo and
// endpointInfo) rather than on every sync.
type portNameCache struct {
	portNames
	// nameString is the port's "namespace/name:port" (element comments).
	nameString string
	// endpoints are the endpoint chains and affinity sets (ClientIP
	// affinity only), by endpoint address.
	endpoints map[netip.AddrPort]endpointName
}

// endpointName is an endpoint's chain and affinity set.
type endpointName struct{ chain, affinitySet string }

// namesOfPort returns the cached names of n, hashing them the first time.
func (r *Renderer) namesOfPort(n model.ServicePortName) *portNameCache {
	if c, ok := r.names[n]; ok {
		return c
	}
	c := &portNameCache{portNames: namesOf(n), nameString: n.String()}
	r.names[n] = c
	return c
}

// endpoint returns the cached names of ep, hashing them the first time.
func (c *portNameCache) endpoint(n model.ServicePortName, ep model.Endpoint) endpointName {
	key := netip.AddrPortFrom(ep.IP, uint16(ep.Port))
	if e, ok := c.endpoints[key]; ok {
		return e
	}
	if c.endpoints == nil {
		c.endpoints = map[netip.AddrPort]endpointName{}
	}
	chain, set := endpointNames(n, ep)
	e := endpointName{chain: chain, affinitySet: set}
	c.endpoints[key] = e
	return e
}

// keepEndpoints forgets the names of endpoints other than eps (called
// when the port is rendered anew, so names of gone endpoints do not pile
// up).
func (c *portNameCache) keepEndpoints(eps []model.Endpoint) {
	if len(c.endpoints) <= len(eps) {
		return
	}
	keep := make(map[netip.AddrPort]struct{}, len(eps))
	for _, ep := range eps {
		keep[netip.AddrPortFrom(ep.IP, uint16(ep.Port))] = struct{}{}
	}
	for key := range c.endpoints {
		if _, ok := keep[key]; !ok {
			delete(c.endpoints, key)
		}
	}
}
