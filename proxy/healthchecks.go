package proxy

import (
	"net/netip"

	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/server"
)

// healthChecks are the health check node ports a snapshot asks for, each
// with its Service's ready local endpoints counted by IP (a pod serving
// two ports counts once), as upstream's HealthCheckNodePorts and
// LocalReadyEndpoints compute them. Only the Services that have a health
// check node port (externalTrafficPolicy Local LoadBalancers: few) get
// their endpoints counted: every sync calls this, and a sync of one changed
// Service among 10,000 must not build a set for every one of them.
func healthChecks(snap *model.Snapshot) map[int32]server.ServiceHealthCheck {
	local := map[[2]string]map[netip.Addr]bool{}
	for _, sp := range snap.ServicePorts {
		if sp.HealthCheckNodePort != 0 {
			local[serviceKeyOf(sp)] = map[netip.Addr]bool{}
		}
	}
	out := map[int32]server.ServiceHealthCheck{}
	if len(local) == 0 {
		return out
	}
	for _, sp := range snap.ServicePorts {
		ips, ok := local[serviceKeyOf(sp)]
		if !ok {
			continue
		}
		for _, ep := range sp.Endpoints {
			if ep.Ready && ep.IsLocal {
				ips[ep.IP] = true
			}
		}
	}
	for _, sp := range snap.ServicePorts {
		if sp.HealthCheckNodePort == 0 {
			continue
		}
		key := serviceKeyOf(sp)
		out[sp.HealthCheckNodePort] = server.ServiceHealthCheck{Namespace: key[0], Name: key[1], LocalEndpoints: len(local[key])}
	}
	return out
}

// serviceKeyOf is the namespace and name of sp's Service.
func serviceKeyOf(sp *model.ServicePort) [2]string {
	return [2]string{sp.Name.Namespace, sp.Name.Name}
}
