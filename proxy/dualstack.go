package proxy

import (
	"log/slog"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/server"
)

// newBackends builds one Backend per IP family of fams, primary first, as
// upstream's NewDualStackProxier builds one proxier per family.
func newBackends(cfg config.Config, iptablesBackend string, fams proxyFamilies, log *slog.Logger) ([]FamilyBackend, error) {
	var out []FamilyBackend
	for _, f := range fams.families() {
		np, err := selectNodePorts(cfg.NodePortAddresses, f, fams.NodeIPs, net.InterfaceAddrs)
		if err != nil {
			closeBackends(out)
			return nil, err
		}
		b, err := newBackend(cfg, iptablesBackend, f, np, log)
		if err != nil {
			closeBackends(out)
			return nil, err
		}
		out = append(out, FamilyBackend{Family: f, Backend: b})
	}
	return out, nil
}

// closeBackends closes what backends hold (the IPVS mode's netlink
// handles).
func closeBackends(backends []FamilyBackend) {
	for _, b := range backends {
		if c, ok := b.Backend.(interface{ Close() }); ok {
			c.Close()
		}
	}
}

// describeBackends is the backends' Describe, joined with "; " (a
// single-stack proxy's is its backend's alone).
func describeBackends(backends []FamilyBackend) string {
	var d []string
	for _, b := range backends {
		d = append(d, b.Backend.Describe())
	}
	return strings.Join(d, "; ")
}

// newServiceHealths are the health check node port servers: one on every
// address for a single-stack proxy (as before), one per family (tcp4 and
// tcp6) for a dual-stack one, as upstream's per-family service health
// servers listen.
func newServiceHealths(backends []FamilyBackend, healthy func() bool, log *slog.Logger) []*server.ServiceHealth {
	if len(backends) == 1 {
		return []*server.ServiceHealth{{Healthy: healthy, Log: log}}
	}
	var out []*server.ServiceHealth
	for _, b := range backends {
		network := "tcp4"
		if b.Family == corev1.IPv6Protocol {
			network = "tcp6"
		}
		out = append(out, &server.ServiceHealth{Network: network, Healthy: healthy, Log: log})
	}
	return out
}

// reportFamilies tells the server each family's sync (its health and
// ip_family metric series) and gives each family's health check node
// ports to its ServiceHealth (healths are in the order of o.Families).
// An Outcome without families (reading the source failed) fails every
// family.
func reportFamilies(srv *server.Server, healths []*server.ServiceHealth, o Outcome) {
	if len(o.Families) == 0 {
		srv.SyncFailed(o.Err)
		return
	}
	for i, f := range o.Families {
		if f.Err != nil {
			srv.FamilySyncFailed(string(f.Family), f.Err)
			continue
		}
		srv.FamilySyncSucceeded(string(f.Family), f.Duration)
		if i < len(healths) {
			healths[i].Sync(f.HealthChecks)
		}
	}
}
