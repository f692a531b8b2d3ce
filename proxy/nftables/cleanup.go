package nftables

import (
	"context"

	"sigs.k8s.io/knftables"
)

// Families are the nftables families kube-proxy's table lives in.
var Families = []knftables.Family{knftables.IPv4Family, knftables.IPv6Family}

// Cleanup deletes the kube-proxy table of every family from nft (one
// Interface per family, as knftables binds an Interface to one table),
// like upstream's CleanupLeftovers; a missing table is fine.
func Cleanup(ctx context.Context, nfts []knftables.Interface) error {
	for _, nft := range nfts {
		tx := nft.NewTransaction()
		tx.Delete(&knftables.Table{})
		if err := nft.Run(ctx, tx); err != nil && !knftables.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// Exists reports whether nft's table exists.
func Exists(ctx context.Context, nft knftables.Interface) (bool, error) {
	_, err := nft.List(ctx, "chain")
	if err == nil {
		return true, nil
	}
	if knftables.IsNotFound(err) {
		return false, nil
	}
	return false, err
}
