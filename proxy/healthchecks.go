package proxy

import (
	"net/netip"

	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/server"
)

// healthChecks are the health check node ports a snapshot asks for, each
// with its Service's ready local endpoints counted by IP (a pod serving
// two ports counts once), as upstream's HealthCheckNodePorts and
// LocalReadyEndpoints compute them.
func healthChecks(snap *model.Snapshot) map[int32]server.ServiceHealthCheck {
	out := map[int32]server.ServiceHealthCheck{}
	local := map[[2]string]map[netip.Addr]bool{}
	for _, sp := range snap.ServicePorts {
		key := [2]string{sp.Name.Namespace, sp.Name.Name}
		for _, ep := range sp.Endpoints {
			if ep.Ready && ep.IsLocal {
				if local[key] == nil {
					local[key] = map[netip.Addr]bool{}
				}
				local[key][ep.IP] = true
			}
		}
	}
	for _, sp := range snap.ServicePorts {
		if sp.HealthCheckNodePort == 0 {
			continue
		}
		key := [2]string{sp.Name.Namespace, sp.Name.Name}
		out[sp.HealthCheckNodePort] = server.ServiceHealthCheck{Namespace: key[0], Name: key[1], LocalEndpoints: len(local[key])}
	}
	return out
}
