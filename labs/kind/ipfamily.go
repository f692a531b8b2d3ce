package kind

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// The IPv6 defaults of kind (pkg/apis/config/v1alpha4/default.go): a /56
// of pods (the node mask is a /64) and a /112 of Services.
const (
	DefaultPodSubnetIPv6     = "fd00:10:244::/56"
	DefaultServiceSubnetIPv6 = "fd00:10:96::/112"
)

// ipFamilyOf is the config's networking.ipFamily, ipv4 when left out (as
// kind defaults it).
func ipFamilyOf(cfg *v1alpha4.Cluster) v1alpha4.ClusterIPFamily {
	if cfg.Networking.IPFamily == "" {
		return v1alpha4.IPv4Family
	}
	return cfg.Networking.IPFamily
}

// defaultSubnets are kind's podSubnet and serviceSubnet for a family: the
// dual-stack ones are the comma lists, IPv4 first.
func defaultSubnets(family v1alpha4.ClusterIPFamily) (pods, services string) {
	switch family {
	case v1alpha4.IPv6Family:
		return DefaultPodSubnetIPv6, DefaultServiceSubnetIPv6
	case v1alpha4.DualStackFamily:
		return DefaultPodSubnet + "," + DefaultPodSubnetIPv6, DefaultServiceSubnet + "," + DefaultServiceSubnetIPv6
	}
	return DefaultPodSubnet, DefaultServiceSubnet
}

// podSubnetOf and serviceSubnetOf are the config's subnets, kind's
// defaults for its family when left out.
func podSubnetOf(cfg *v1alpha4.Cluster) string {
	if cfg.Networking.PodSubnet != "" {
		return cfg.Networking.PodSubnet
	}
	pods, _ := defaultSubnets(ipFamilyOf(cfg))
	return pods
}

func serviceSubnetOf(cfg *v1alpha4.Cluster) string {
	if cfg.Networking.ServiceSubnet != "" {
		return cfg.Networking.ServiceSubnet
	}
	_, services := defaultSubnets(ipFamilyOf(cfg))
	return services
}

// validateNetworking checks networking.ipFamily and the two subnets as
// kind's Cluster.Validate does (pkg/internal/apis/config/validate.go),
// with its messages, before anything starts: kind itself checks only
// once Docker runs.
func validateNetworking(cfg *v1alpha4.Cluster) error {
	family := ipFamilyOf(cfg)
	switch family {
	case v1alpha4.IPv4Family, v1alpha4.IPv6Family, v1alpha4.DualStackFamily:
	default:
		return fmt.Errorf("networking.ipFamily: invalid ipFamily: %s (want ipv4, ipv6 or dual)", family)
	}
	if err := validateSubnets(podSubnetOf(cfg), family); err != nil {
		return fmt.Errorf("networking.podSubnet: invalid pod subnet %v", err)
	}
	if err := validateSubnets(serviceSubnetOf(cfg), family); err != nil {
		return fmt.Errorf("networking.serviceSubnet: invalid service subnet %v", err)
	}
	return nil
}

// validateSubnets is kind's validateSubnets: a comma list of CIDRs, one
// for a single stack (of its family), one or one of each family for dual.
func validateSubnets(list string, family v1alpha4.ClusterIPFamily) error {
	subnets, err := parseSubnets(list)
	if err != nil {
		return err
	}
	dual := family == v1alpha4.DualStackFamily
	switch {
	case len(subnets) == 0:
		return errors.New("no subnets defined")
	case dual && len(subnets) > 2:
		return errors.New("expected one (IPv4 or IPv6) CIDR or two CIDRs from each family for dual-stack networking")
	case dual && len(subnets) == 2 && subnets[0].Addr().Is4() == subnets[1].Addr().Is4():
		return errors.New("expected one (IPv4 or IPv6) CIDR or two CIDRs from each family for dual-stack networking")
	case !dual && len(subnets) > 1:
		return errors.New("only one CIDR allowed for single-stack networking")
	case family == v1alpha4.IPv4Family && !subnets[0].Addr().Is4():
		return errors.New("expected IPv4 CIDR for IPv4 family")
	case family == v1alpha4.IPv6Family && subnets[0].Addr().Is4():
		return errors.New("expected IPv6 CIDR for IPv6 family")
	}
	return nil
}

// parseSubnets reads a comma list of CIDRs (kind's failure message for a
// bad one).
func parseSubnets(list string) ([]netip.Prefix, error) {
	var subnets []netip.Prefix
	for _, s := range strings.Split(list, ",") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("failed to parse cidr value:%q with error: %v", s, err)
		}
		subnets = append(subnets, p.Masked())
	}
	return subnets, nil
}

// subnetsByFamily splits a validated comma list into its IPv4 and IPv6
// subnet (each invalid when absent).
func subnetsByFamily(list string) (v4, v6 netip.Prefix) {
	subnets, _ := parseSubnets(list)
	for _, p := range subnets {
		if p.Addr().Is4() {
			v4 = p
		} else {
			v6 = p
		}
	}
	return v4, v6
}
