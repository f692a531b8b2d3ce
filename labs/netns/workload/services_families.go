package workload

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The API server's dual-stack rules for a Service's ipFamilyPolicy,
// ipFamilies and clusterIPs: defaulting and validation as
// pkg/registry/core/service/storage (alloc.go: initIPFamilyFields;
// storage.go: normalizeClusterIPs, patchAllocatedValues,
// defaultOnReadIPFamilies) and pkg/apis/core/validation
// (ValidateServiceClusterIPsRelatedFields, validateUpgradeDowngrade*) do
// them, with their messages. The lab's Service ranges play the API
// server's per-family allocators.

var (
	supportedIPFamilies       = sets.New(corev1.IPv4Protocol, corev1.IPv6Protocol)
	supportedIPFamilyPolicies = sets.New(corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack)
)

// serviceSubnets are the lab's Service ranges, primary first.
func (c Cluster) serviceSubnets() []netip.Prefix {
	if len(c.ServiceSubnets) > 0 {
		return c.ServiceSubnets
	}
	return []netip.Prefix{c.ServiceSubnet}
}

// serviceSubnetOf is the lab's Service range of family, if it has one:
// the API server's serviceIPAllocatorsByFamily.
func (c Cluster) serviceSubnetOf(family corev1.IPFamily) (netip.Prefix, bool) {
	for _, p := range c.serviceSubnets() {
		if familyOfAddr(p.Addr()) == family {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// dualStack reports whether the lab has a Service range in both families.
func (c Cluster) dualStack() bool {
	_, v4 := c.serviceSubnetOf(corev1.IPv4Protocol)
	_, v6 := c.serviceSubnetOf(corev1.IPv6Protocol)
	return v4 && v6
}

// primaryFamily is the family of the primary Service range (the API
// server's defaultServiceIPFamily).
func (c Cluster) primaryFamily() corev1.IPFamily {
	return familyOfAddr(c.serviceSubnets()[0].Addr())
}

// familyOfAddr is the IP family of an address.
func familyOfAddr(a netip.Addr) corev1.IPFamily {
	if a.Is4() || a.Is4In6() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// familyOf is upstream's familyOf: the family of an IP string, or
// "unknown".
func familyOf(ip string) corev1.IPFamily {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return corev1.IPFamily("unknown")
	}
	return familyOfAddr(a)
}

// otherFamily is the family that is not f.
func otherFamily(f corev1.IPFamily) corev1.IPFamily {
	if f == corev1.IPv4Protocol {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

// isHeadless is upstream's isHeadlessService.
func isHeadless(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ClusterIPs) == 1 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

// needsClusterIP: every type but ExternalName has cluster IPs (or None).
func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName
}

// normalizeClusterIPs is upstream's: keep clusterIP and clusterIPs in step
// when the manifest manages only one of them.
func normalizeClusterIPs(svc, old *corev1.Service) {
	s := &svc.Spec
	if old == nil {
		if s.ClusterIP != "" && len(s.ClusterIPs) == 0 {
			s.ClusterIPs = []string{s.ClusterIP}
		}
		return
	}
	if len(old.Spec.ClusterIPs) > 0 && len(s.ClusterIPs) == 0 && old.Spec.ClusterIP == s.ClusterIP {
		s.ClusterIPs = old.Spec.ClusterIPs
	}
	if old.Spec.ClusterIP != s.ClusterIP {
		if old.Spec.ClusterIP != "" && s.ClusterIP == "" {
			if sameClusterIPs(old, svc) {
				s.ClusterIPs = nil
			}
		} else if sameClusterIPs(old, svc) {
			s.ClusterIPs = []string{s.ClusterIP}
		}
	}
}

// patchAllocatedValues is upstream's for cluster IPs: an update that does
// not name them keeps the ones allocated (a manifest applied again). It
// keeps the stored ipFamilies too when the manifest names none, as
// `kubectl apply`'s merge keeps a field the API server filled in: so a
// PreferDualStack Service applied again keeps its families even if the
// lab's changed since (the policy is kept by initIPFamilyFields).
func patchAllocatedValues(svc, old *corev1.Service) {
	if !needsClusterIP(old) || !needsClusterIP(svc) {
		return
	}
	if svc.Spec.ClusterIP == "" {
		svc.Spec.ClusterIP = old.Spec.ClusterIP
	}
	if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
		svc.Spec.ClusterIPs = append([]string(nil), old.Spec.ClusterIPs...)
	}
	if len(svc.Spec.IPFamilies) == 0 && svc.Spec.ClusterIP == old.Spec.ClusterIP {
		svc.Spec.IPFamilies = append([]corev1.IPFamily(nil), old.Spec.IPFamilies...)
	}
}

// defaultOnReadIPFamilies is upstream's: a Service stored without
// ipFamilies (written before dual-stack, or by an older svclab) reads
// as the API server would default it.
func (c Cluster) defaultOnReadIPFamilies(svc *corev1.Service) {
	s := &svc.Spec
	if !needsClusterIP(svc) || len(s.IPFamilies) > 0 {
		return
	}
	single, require := corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyRequireDualStack
	if s.ClusterIP == corev1.ClusterIPNone {
		if len(s.Selector) == 0 {
			s.IPFamilyPolicy = &require
			s.IPFamilies = []corev1.IPFamily{c.primaryFamily(), otherFamily(c.primaryFamily())}
		} else {
			s.IPFamilyPolicy = &single
			s.IPFamilies = []corev1.IPFamily{c.primaryFamily()}
		}
		return
	}
	for _, ip := range s.ClusterIPs {
		s.IPFamilies = append(s.IPFamilies, familyOf(ip))
	}
	switch len(s.IPFamilies) {
	case 1:
		s.IPFamilyPolicy = &single
	case 2:
		s.IPFamilyPolicy = &require
	}
}

// clusterIPsRelatedErrors is upstream's
// ValidateServiceClusterIPsRelatedFields: clusterIP and clusterIPs agree,
// families and policy are known values, at most two cluster IPs of
// different families, each of the family ipFamilies names for it.
func clusterIPsRelatedErrors(svc, old *corev1.Service) field.ErrorList {
	s := &svc.Spec
	if s.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	clusterIPsPath, familiesPath := specPath.Child("clusterIPs"), specPath.Child("ipFamilies")
	if s.ClusterIP != "" {
		if len(s.ClusterIPs) == 0 {
			errs = append(errs, field.Required(clusterIPsPath, ""))
		} else if s.ClusterIPs[0] != s.ClusterIP {
			errs = append(errs, field.Invalid(clusterIPsPath, s.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(s.ClusterIPs) != 0 {
		errs = append(errs, field.Invalid(clusterIPsPath, s.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := sets.New[corev1.IPFamily]()
	for i, f := range s.IPFamilies {
		if !supportedIPFamilies.Has(f) {
			errs = append(errs, field.NotSupported(familiesPath.Index(i), f, sets.List(supportedIPFamilies)))
		}
		if seen.Has(f) {
			errs = append(errs, field.Duplicate(familiesPath.Index(i), f))
		}
		seen.Insert(f)
	}
	if s.IPFamilyPolicy != nil && !supportedIPFamilyPolicies.Has(*s.IPFamilyPolicy) {
		errs = append(errs, field.NotSupported(specPath.Child("ipFamilyPolicy"), s.IPFamilyPolicy, sets.List(supportedIPFamilyPolicies)))
	}
	var existing []string
	if old != nil {
		existing = old.Spec.ClusterIPs
	}
	invalidIPs := false
	for i, ip := range s.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(s.ClusterIPs) > 1 {
				invalidIPs = true
				errs = append(errs, field.Invalid(clusterIPsPath, s.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		if e := validIPForLegacyField(clusterIPsPath.Index(i), ip, existing); len(e) > 0 {
			invalidIPs = true
			errs = append(errs, e...)
		}
	}
	if len(s.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(clusterIPsPath, s.ClusterIPs, "may only hold up to 2 values"))
	}
	if invalidIPs {
		return errs
	}
	if len(s.ClusterIPs) > 1 && !dualStackIPs(s.ClusterIPs) {
		errs = append(errs, field.Invalid(clusterIPsPath, s.ClusterIPs, "may specify no more than one IP for each IP family"))
	}
	if !isHeadless(svc) && len(s.ClusterIPs) > 0 && len(s.IPFamilies) > 0 {
		for i, ip := range s.ClusterIPs {
			if i >= len(s.IPFamilies) {
				break
			}
			if s.IPFamilies[i] == corev1.IPv4Protocol && familyOf(ip) == corev1.IPv6Protocol {
				errs = append(errs, field.Invalid(clusterIPsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if s.IPFamilies[i] == corev1.IPv6Protocol && familyOf(ip) != corev1.IPv6Protocol {
				errs = append(errs, field.Invalid(clusterIPsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return errs
}

// dualStackIPs is netutils.IsDualStackIPStrings: exactly one IP of each
// family.
func dualStackIPs(ips []string) bool {
	v4, v6 := 0, 0
	for _, ip := range ips {
		if familyOf(ip) == corev1.IPv6Protocol {
			v6++
		} else {
			v4++
		}
	}
	return v4 == 1 && v6 == 1
}

// ServiceAsRead is what the API server returns for a stored Service
// (defaultOnReadService): clusterIPs in step with clusterIP, and
// ipFamilies and ipFamilyPolicy as it defaults them for a Service stored
// without (one an older svclab wrote). svc is left alone.
func (c Cluster) ServiceAsRead(svc *corev1.Service) *corev1.Service {
	out := svc.DeepCopy()
	normalizeClusterIPs(out, nil)
	c.defaultOnReadIPFamilies(out)
	if out.Spec.Type == corev1.ServiceTypeExternalName {
		out.Spec.InternalTrafficPolicy = nil
	}
	return out
}
