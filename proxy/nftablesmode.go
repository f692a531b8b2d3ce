package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

// nftablesBackend is nftables mode: one knftables transaction per sync
// into table ip kube-proxy, touching only what changed.
type nftablesBackend struct {
	syncer *nftables.Syncer
	log    *slog.Logger
}

// newNFTablesBackend opens the IPv4 table (the snapshots the loop syncs
// are IPv4) and creates it at once, so that the mode the proxy reports is
// one the kernel shows: a kernel or nft that cannot hold the table stops
// the proxy before it serves /proxyMode, as upstream's NewProxier fails.
func newNFTablesBackend(cfg config.Config, log *slog.Logger) (Backend, error) {
	nft, err := nftables.Open(knftables.IPv4Family)
	if err != nil {
		return nil, err
	}
	return startNFTablesBackend(cfg, nft, log)
}

// startNFTablesBackend is newNFTablesBackend over a given interface (a
// knftables.Fake in tests).
func startNFTablesBackend(cfg config.Config, nft knftables.Interface, log *slog.Logger) (Backend, error) {
	r, err := nftables.NewRenderer(nftablesOptions(cfg))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	tx := nft.NewTransaction()
	tx.Add(&knftables.Table{Comment: ptr.To("rules for kube-proxy")})
	if err := nft.Run(context.Background(), tx); err != nil {
		return nil, fmt.Errorf("creating table ip %s: %w", nftables.TableName, err)
	}
	if ok, err := nftables.Exists(context.Background(), nft); err != nil || !ok {
		return nil, fmt.Errorf("table ip %s not in the kernel after creating it (%v)", nftables.TableName, err)
	}
	return &nftablesBackend{syncer: &nftables.Syncer{NFT: nft, Renderer: r}, log: log}, nil
}

// nftablesOptions are the renderer options of cfg: the masquerade
// settings and the ClusterCIDR local detector of the IPv4 cluster CIDR.
// Node ports answer on every local address, as in svclab's iptables mode
// (nodePortAddresses is not applied by the embedded proxy).
func nftablesOptions(cfg config.Config) nftables.Options {
	opts := nftables.Options{
		Family:        corev1.IPv4Protocol,
		MasqueradeBit: cfg.MasqueradeBit,
		MasqueradeAll: cfg.MasqueradeAll,
	}
	if cidr := ipv4ClusterCIDR(cfg); cidr != "" {
		opts.LocalDetector = nftables.DetectLocalByCIDR(netip.MustParsePrefix(cidr))
	}
	return opts
}

func (b *nftablesBackend) Mode() string { return string(config.ModeNFTables) }

func (b *nftablesBackend) Describe() string {
	return "nftables (table ip " + nftables.TableName + ", knftables)"
}

// ForceFullSync implements FullSyncer: the next sync reads the kernel's
// table and rewrites every chain.
func (b *nftablesBackend) ForceFullSync() { b.syncer.ForceFull() }

func (b *nftablesBackend) Sync(snap *model.Snapshot) (SyncStats, error) {
	res, err := b.syncer.Sync(context.Background(), snap)
	if err != nil {
		return SyncStats{}, err
	}
	return SyncStats{Full: res.Full, ServicePorts: res.ServicePorts, Endpoints: res.Endpoints, Bytes: res.Bytes}, nil
}
