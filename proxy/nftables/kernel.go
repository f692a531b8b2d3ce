package nftables

import (
	"context"
	"fmt"

	"sigs.k8s.io/knftables"
)

// Open returns the knftables interface of family's kube-proxy table in the
// network namespace of the calling thread (knftables runs the nft binary,
// which must be 1.0.1 or later).
func Open(family knftables.Family) (knftables.Interface, error) {
	nft, err := knftables.New(family, TableName)
	if err != nil {
		return nil, fmt.Errorf("nftables (%s %s): %w", family, TableName, err)
	}
	return nft, nil
}

// FindTables lists the families whose kube-proxy table exists in the
// calling thread's network namespace. Without a usable nft nothing can
// have been left through it: no families and no error.
func FindTables(ctx context.Context) ([]knftables.Family, error) {
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
func CleanupKernel(ctx context.Context) error {
	var nfts []knftables.Interface
	for _, f := range Families {
		nft, err := knftables.New(f, TableName)
		if err != nil {
			return nil
		}
		nfts = append(nfts, nft)
	}
	return Cleanup(ctx, nfts)
}
