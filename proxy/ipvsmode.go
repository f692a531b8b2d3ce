package proxy

import (
	"log/slog"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/ipvs"
	"github.com/svclab/svclab/proxy/model"
)

// newBackend builds the Backend of the configured mode for one IP family.
func newBackend(cfg config.Config, iptablesBackend string, family corev1.IPFamily, log *slog.Logger) (Backend, error) {
	if cfg.Mode == config.ModeNFTables {
		return newNFTablesBackend(cfg, family, log)
	}
	if cfg.Mode == config.ModeIPVS {
		b, err := ipvs.NewBackendFor(cfg, family, iptablesBackend, log)
		if err != nil {
			return nil, err
		}
		return ipvsBackend{b}, nil
	}
	return newIPTablesBackend(cfg, iptablesBackend, family, log)
}

// ipvsBackend adapts the IPVS mode to the loop's Backend (package ipvs
// cannot import package proxy).
type ipvsBackend struct{ *ipvs.Backend }

func (b ipvsBackend) Sync(snap *model.Snapshot) (SyncStats, error) {
	r, err := b.Backend.Sync(snap)
	return SyncStats{Full: r.Full, ServicePorts: r.ServicePorts, Endpoints: r.Endpoints, Bytes: r.Bytes}, err
}
