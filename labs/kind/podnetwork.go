package kind

import (
	"fmt"
	"net/netip"
	"slices"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

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

// checkIPFamilyCNI: an IPv6 or dual-stack cluster needs a pod network
// that gives pods IPv6 addresses: the real flannel (its net-conf.json's
// EnableIPv6 and IPv6Network, see flannel.WithIPv6) or svclab's
// flannel-vxlan (flannel-v6.1 beside flannel.1, as flanneld). svclab's
// calico-proxyarp and upstream Calico's manifest are IPv4-only here so
// far.
func checkIPFamilyCNI(cniName string, family v1alpha4.ClusterIPFamily) error {
	if family == v1alpha4.IPv4Family || cniName == flannel.Name || cniName == cni.FlannelVXLAN {
		return nil
	}
	return fmt.Errorf("networking.ipFamily %s: --cni %s gives pods IPv4 addresses only; use --cni %s (the real flannel, with its IPv6 settings) or --cni %s", family, cniName, flannel.Name, cni.FlannelVXLAN)
}

// checkIPFamilyProxy: an IPv6 or dual-stack cluster needs a proxy of
// both families: kind's kube-proxy (svclab's proxy DaemonSet is
// IPv4-only in kind clusters so far).
func checkIPFamilyProxy(proxy string, family v1alpha4.ClusterIPFamily) error {
	if family == v1alpha4.IPv4Family || proxy == ProxyStock {
		return nil
	}
	return fmt.Errorf("networking.ipFamily %s: --proxy %s is IPv4-only in kind clusters so far; use --proxy %s (kind's kube-proxy)", family, proxy, ProxyStock)
}

// checkPodSubnet: the real flannel's manifest gives flanneld
// net-conf.json's Network; the nodes' podCIDRs, which flanneld also
// reads, come from the config's podSubnet. They must agree. An IPv6
// podSubnet (ipFamily ipv6 or dual) becomes net-conf.json's IPv6Network
// (flannel.WithIPv6), so any is right.
// For --cni calico, the pool is upstream's default until the manifest is
// downloaded; Create checks the downloaded manifest's pool again.
func checkPodSubnet(cniName string, family v1alpha4.ClusterIPFamily, podSubnet string) error {
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
	if family != v1alpha4.IPv4Family {
		if podSubnet == "" {
			podSubnet, _ = defaultSubnets(family)
		}
		v4, _ := subnetsByFamily(podSubnet)
		if v4.IsValid() && v4 != info.Network {
			return fmt.Errorf("networking.podSubnet %s: --cni flannel applies upstream's kube-flannel.yml, whose net-conf.json Network is %s; use that IPv4 subnet (or leave podSubnet out)", podSubnet, info.Network)
		}
		return nil
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

// flannelManifest is the real flannel's manifest for a cluster:
// upstream's as svclab keeps it for IPv4, with net-conf.json's IPv6
// settings for ipv6 and dual (flannel's Documentation/configuration.md:
// EnableIPv6 and IPv6Network; EnableIPv4 false for IPv6 alone).
func flannelManifest(family v1alpha4.ClusterIPFamily, podSubnet string) (string, error) {
	if family == v1alpha4.IPv4Family {
		return flannel.Manifest(), nil
	}
	_, v6 := subnetsByFamily(podSubnet)
	if !v6.IsValid() {
		return "", fmt.Errorf("networking.podSubnet %s: ipFamily %s wants an IPv6 subnet for flannel's IPv6Network", podSubnet, family)
	}
	v4, _ := subnetsByFamily(podSubnet)
	return flannel.WithIPv6(flannel.Manifest(), v6, v4.IsValid())
}
