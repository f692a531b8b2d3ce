package proxy

import (
	"log/slog"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/ipvs"
	"github.com/svclab/svclab/proxy/model"
)

// newBackend builds the Backend of the configured mode for one IP family.
// np is where the family's node ports answer (the ipvs mode reads
// nodePortAddresses itself).
func newBackend(cfg config.Config, iptablesBackend string, family corev1.IPFamily, np nodePortSelection, log *slog.Logger) (Backend, error) {
	if cfg.Mode == config.ModeNFTables {
		return newNFTablesBackend(cfg, family, np, log)
	}
	if cfg.Mode == config.ModeIPVS {
		b, err := ipvs.NewBackendFor(cfg, family, iptablesBackend, log)
		if err != nil {
			return nil, err
		}
		return ipvsBackend{b}, nil
	}
	return newIPTablesBackend(cfg, iptablesBackend, family, np, log)
}

// ipvsBackend adapts the IPVS mode to the loop's Backend (package ipvs
// cannot import package proxy).
type ipvsBackend struct{ *ipvs.Backend }

func (b ipvsBackend) Sync(snap *model.Snapshot) (SyncStats, error) {
	r, err := b.Backend.Sync(snap)
	return SyncStats{Full: r.Full, ServicePorts: r.ServicePorts, Endpoints: r.Endpoints, Bytes: r.Bytes}, err
}
