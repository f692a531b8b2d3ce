package kind

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/internal/calico"
	"github.com/svclab/svclab/labs/kind/internal/flannel"
)

// PodNetworks are the --cni choices: svclab's own CNI in its two variants
// (package cni), the real flannel (package flannel), and upstream Calico
// from a pinned manifest (package calico; needs a registry).
var PodNetworks = []string{cni.FlannelVXLAN, cni.CalicoProxyARP, flannel.Name, calico.Name}

// validateCNI checks a --cni value.
func validateCNI(name string) error {
	if !slices.Contains(PodNetworks, name) {
		return fmt.Errorf("cni %q: want one of %v", name, PodNetworks)
	}
	return nil
}

// DescribeCNI says what runs a cluster's pod network, for `get clusters`:
// the real flannel, or svclab's CNI imitating one.
func DescribeCNI(name string) string {
	switch name {
	case flannel.Name:
		return flannel.Name + " " + flannel.Version + " (upstream kube-flannel.yml)"
	case calico.Name:
		return calico.Release.Describe()
	case cni.FlannelVXLAN, cni.CalicoProxyARP:
		return name + " (svclab's CNI)"
	}
	return name
}

// checkPodSubnet: the real flannel's manifest, applied unchanged, gives
// flanneld net-conf.json's Network; the nodes' podCIDRs, which flanneld
// also reads, come from the config's podSubnet. They must agree.
// For --cni calico, the pool is upstream's default until the manifest is
// downloaded; Create checks the downloaded manifest's pool again.
func checkPodSubnet(cniName, podSubnet string) error {
	if cniName == calico.Name {
		return calico.CheckPodSubnet(podSubnet, DefaultPodSubnet, netip.MustParsePrefix(calico.DefaultPoolCIDR))
	}
	if cniName != flannel.Name {
		return nil
	}
	info, err := flannel.Parse(flannel.Manifest())
	if err != nil {
		return err
	}
	if podSubnet == "" {
		podSubnet = DefaultPodSubnet
	}
	p, err := netip.ParsePrefix(podSubnet)
	if err != nil {
		return fmt.Errorf("networking.podSubnet %q: %w", podSubnet, err)
	}
	if p != info.Network {
		return fmt.Errorf("networking.podSubnet %s: --cni flannel applies upstream's kube-flannel.yml, whose net-conf.json Network is %s; use that podSubnet (or leave it out)", p, info.Network)
	}
	return nil
}
