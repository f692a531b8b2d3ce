package netns

import (
	"context"

	"github.com/svclab/svclab/labs/netns/network"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/nftables"
)

// Leftovers reads what kube-proxy modes left in a node (iptables chains,
// IPVS virtual servers, kube-ipvs0 and its addresses, ipsets, the
// nftables mode's kube-proxy tables), and the mode
// its proxy runs now, so a caller can show what the other mode left behind
// after a switch (Leftovers.ForeignTo(mode)).
func (l *Lab) Leftovers(node string) (left *ipvs.Leftovers, mode string, err error) {
	ns := network.NamespaceName(l.Name(), node)
	k, err := kernel.Open(ns)
	if err != nil {
		return nil, "", err
	}
	defer k.Close()
	backend, err := iptkernel.ParseBackend(string(l.Topology.Spec.Proxy.IPTablesBackend))
	if err != nil {
		return nil, "", err
	}
	ipt, err := iptkernel.NewExecRunner(iptkernel.ExecOptions{Backend: backend, NetNS: ns})
	if err != nil {
		return nil, "", err
	}
	left, err = ipvs.FindLeftovers(k, ipt)
	if err != nil {
		return nil, "", err
	}
	err = network.Do(ns, func() error { // nft runs in the node's namespace
		families, err := nftables.FindTables(context.Background())
		for _, f := range families {
			left.NFTables = append(left.NFTables, string(f))
		}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	statuses, err := l.Store.ProxyStatuses()
	if err != nil {
		return nil, "", err
	}
	return left, statuses[node].Mode, nil
}
