package proxy

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

// nftablesBackend is nftables mode for one IP family: one knftables
// transaction per sync into table ip kube-proxy (IPv4) or table ip6
// kube-proxy (IPv6), touching only what changed.
type nftablesBackend struct {
	family knftables.Family
	syncer *nftables.Syncer
	log    *slog.Logger
}

// nftablesFamily is the nftables family of an IP family's table.
func nftablesFamily(f corev1.IPFamily) knftables.Family {
	if f == corev1.IPv6Protocol {
		return knftables.IPv6Family
	}
	return knftables.IPv4Family
}

// newNFTablesBackend opens the table of family and creates it at once, so
// that the mode the proxy reports is one the kernel shows: a kernel or nft
// that cannot hold the table stops the proxy before it serves /proxyMode,
// as upstream's NewProxier fails.
func newNFTablesBackend(cfg config.Config, family corev1.IPFamily, np nodePortSelection, log *slog.Logger) (Backend, error) {
	nft, err := nftables.Open(nftablesFamily(family))
	if err != nil {
		return nil, err
	}
	return startNFTablesBackend(cfg, family, np, nft, log)
}

// startNFTablesBackend is newNFTablesBackend over a given interface (a
// knftables.Fake in tests, made for the family's table).
func startNFTablesBackend(cfg config.Config, family corev1.IPFamily, np nodePortSelection, nft knftables.Interface, log *slog.Logger) (Backend, error) {
	r, err := nftables.NewRenderer(nftablesOptions(cfg, family, np))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	nf := nftablesFamily(family)
	tx := nft.NewTransaction()
	tx.Add(&knftables.Table{Comment: ptr.To("rules for kube-proxy")})
	if err := nft.Run(context.Background(), tx); err != nil {
		return nil, fmt.Errorf("creating table %s %s: %w", nf, nftables.TableName, err)
	}
	if ok, err := nftables.Exists(context.Background(), nft); err != nil || !ok {
		return nil, fmt.Errorf("table %s %s not in the kernel after creating it (%v)", nf, nftables.TableName, err)
	}
	return &nftablesBackend{family: nf, syncer: &nftables.Syncer{NFT: nft, Renderer: r}, log: log}, nil
}

// nftablesOptions are the renderer options of cfg for family: the
// masquerade settings and the ClusterCIDR local detector of the family's
// cluster CIDR (upstream's getLocalDetectors; none of the family: no
// detector), and the node ports of np: every local address unless
// nodePortAddresses names CIDRs of the family.
func nftablesOptions(cfg config.Config, family corev1.IPFamily, np nodePortSelection) nftables.Options {
	opts := nftables.Options{
		Family:            family,
		MasqueradeBit:     cfg.MasqueradeBit,
		MasqueradeAll:     cfg.MasqueradeAll,
		NodePortCIDRs:     np.CIDRs,
		NodePortAddresses: np.Addresses,
	}
	if cidrs := clusterCIDRsOf(cfg, family); len(cidrs) > 0 {
		opts.LocalDetector = nftables.DetectLocalByCIDR(cidrs[0])
	}
	return opts
}

func (b *nftablesBackend) Mode() string { return string(config.ModeNFTables) }

func (b *nftablesBackend) Describe() string {
	return "nftables (table " + string(b.family) + " " + nftables.TableName + ", knftables; partial syncs as netlink batches)"
}

// Close closes the netlink socket of the partial syncs, if one is open
// (the run loop closes a backend that has Close).
func (b *nftablesBackend) Close() {
	if c, ok := b.syncer.NFT.(interface{ Close() error }); ok {
		c.Close()
	}
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
