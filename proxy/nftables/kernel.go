package nftables

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/knftables"
)

// Open returns the interface of family's kube-proxy table in the network
// namespace of the calling thread: partial syncs written over netlink
// where NetlinkFirst knows them, everything else through knftables (the
// nft binary, which must be 1.0.1 or later).
func Open(family knftables.Family) (*NetlinkFirst, error) {
	nft, err := OpenNFT(family)
	if err != nil {
		return nil, err
	}
	return NewNetlinkFirst(nft, family), nil
}

// OpenNFT returns the knftables interface of family's kube-proxy table in
// the network namespace of the calling thread, nft for everything.
func OpenNFT(family knftables.Family) (knftables.Interface, error) {
	nft, err := knftables.New(family, TableName)
	if err != nil {
		return nil, fmt.Errorf("nftables (%s %s): %w", family, TableName, err)
	}
	return nft, nil
}

// FindTables lists the families whose kube-proxy table exists in the
// calling thread's network namespace, from one netlink dump of its tables;
// where that cannot be had, from nft (without a usable nft nothing can
// have been left through it: no families and no error).
func FindTables(ctx context.Context) ([]knftables.Family, error) {
	if found, err := familiesWithTable(TableName); err == nil {
		return slices.DeleteFunc(found, func(f knftables.Family) bool { return !slices.Contains(Families, f) }), nil
	}
	var found []knftables.Family
	for _, f := range Families {
		nft, err := knftables.New(f, TableName)
		if err != nil {
			return nil, nil
		}
		ok, err := Exists(ctx, nft)
		if err != nil {
			return nil, fmt.Errorf("listing table %s %s: %w", f, TableName, err)
		}
		if ok {
			found = append(found, f)
		}
	}
	return found, nil
}

// CleanupKernel deletes the kube-proxy table of both families in the
// calling thread's network namespace, like upstream's
// nftables.CleanupLeftovers; without a usable nft there is nothing to do.
// Only the families whose table the kernel holds are asked of nft (one
// netlink dump says which): a proxy starting in iptables or ipvs mode
// where nftables mode never ran runs no nft at all, where upstream's
// knftables runs six.
func CleanupKernel(ctx context.Context) error {
	var nfts []knftables.Interface
	for _, f := range familiesToClean() {
		nft, err := knftables.New(f, TableName)
		if err != nil {
			return nil
		}
		nfts = append(nfts, nft)
	}
	return Cleanup(ctx, nfts)
}
