package workload

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validIPForLegacyField is the API server's check of a cluster IP (strict,
// as in 1.36; an IP the Service already had passes).
func validIPForLegacyField(path *field.Path, ip string, existing []string) field.ErrorList {
	return validation.IsValidIPForLegacyField(path, ip, true, existing)
}

// initIPFamilyFields is upstream's Allocators.initIPFamilyFields: it
// defaults ipFamilyPolicy (the old one on update; RequireDualStack for a
// headless Service without a selector; else SingleStack) and ipFamilies
// (from the cluster IPs given, then the lab's primary family, then the
// other one for a dual-stack policy on a dual-stack lab), and refuses
// what the lab cannot give: RequireDualStack on a single-stack lab, a
// family it has no Service range of. On update it trims the secondary IP
// and family of a Service set to SingleStack, and refuses releasing them
// under any other policy.
func (c Cluster) initIPFamilyFields(svc, old *corev1.Service) field.ErrorList {
	s := &svc.Spec
	if s.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if matchingPreferDualStack(svc, old) {
		return nil
	}
	defaultIPFamilyPolicy(svc, old)
	if errs := clusterIPsRelatedErrors(svc, old); len(errs) > 0 {
		return errs
	}
	policyPath := specPath.Child("ipFamilyPolicy")
	var errs field.ErrorList
	if old != nil {
		errs = append(errs, prepareFamilyUpdate(svc, old)...)
	}
	if *s.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack {
		if len(s.ClusterIPs) == 2 {
			errs = append(errs, field.Invalid(policyPath, s.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(s.IPFamilies) == 2 {
			errs = append(errs, field.Invalid(policyPath, s.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	errs = append(errs, c.inferFamiliesFromClusterIPs(svc)...)
	if len(errs) > 0 {
		return errs
	}
	if s.ClusterIP == corev1.ClusterIPNone && len(s.Selector) == 0 {
		c.defaultHeadlessSelectorlessFamilies(svc)
		return nil
	}
	if *s.IPFamilyPolicy == corev1.IPFamilyPolicyRequireDualStack && !c.dualStack() {
		errs = append(errs, field.Invalid(policyPath, s.IPFamilyPolicy, "this cluster is not configured for dual-stack services"))
	}
	for i, f := range s.IPFamilies {
		if _, ok := c.serviceSubnetOf(f); !ok {
			errs = append(errs, field.Invalid(specPath.Child("ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if len(s.IPFamilies) == 0 {
		s.IPFamilies = []corev1.IPFamily{c.primaryFamily()}
	}
	if *s.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack && len(s.IPFamilies) == 1 && c.dualStack() {
		s.IPFamilies = append(s.IPFamilies, otherFamily(s.IPFamilies[0]))
	}
	return nil
}

// defaultIPFamilyPolicy: the old policy on update, RequireDualStack for a
// headless Service without a selector, else SingleStack.
func defaultIPFamilyPolicy(svc, old *corev1.Service) {
	s := &svc.Spec
	if s.IPFamilyPolicy != nil {
		return
	}
	policy := corev1.IPFamilyPolicySingleStack
	switch {
	case old != nil && old.Spec.IPFamilyPolicy != nil:
		policy = *old.Spec.IPFamilyPolicy
	case s.ClusterIP == corev1.ClusterIPNone && len(s.Selector) == 0:
		policy = corev1.IPFamilyPolicyRequireDualStack
	}
	s.IPFamilyPolicy = &policy
}

// prepareFamilyUpdate: setting SingleStack with the cluster IPs and
// families unchanged drops the secondary ones; under any other policy,
// dropping them is an error.
func prepareFamilyUpdate(svc, old *corev1.Service) field.ErrorList {
	s := &svc.Spec
	policyPath := specPath.Child("ipFamilyPolicy")
	if *s.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack {
		if sameClusterIPs(old, svc) && len(s.ClusterIPs) > 1 {
			s.ClusterIPs = s.ClusterIPs[0:1]
		}
		if slices.Equal(old.Spec.IPFamilies, s.IPFamilies) && len(s.IPFamilies) > 1 {
			s.IPFamilies = s.IPFamilies[0:1]
		}
		return nil
	}
	var errs field.ErrorList
	if len(s.ClusterIPs) > 0 && len(s.ClusterIPs) < len(old.Spec.ClusterIPs) {
		errs = append(errs, field.Invalid(policyPath, s.IPFamilyPolicy, "must be 'SingleStack' to release the secondary cluster IP"))
	}
	if len(s.IPFamilies) > 0 && len(s.IPFamilies) < len(old.Spec.IPFamilies) {
		errs = append(errs, field.Invalid(policyPath, s.IPFamilyPolicy, "must be 'SingleStack' to release the secondary IP family"))
	}
	return errs
}

// inferFamiliesFromClusterIPs adds the family of each given cluster IP
// that ipFamilies does not name, when the lab has it.
func (c Cluster) inferFamiliesFromClusterIPs(svc *corev1.Service) field.ErrorList {
	s := &svc.Spec
	var errs field.ErrorList
	for i, ip := range s.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if i < len(s.IPFamilies) {
			continue
		}
		f := familyOf(ip)
		if _, ok := c.serviceSubnetOf(f); !ok {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(i), s.ClusterIPs, string(f)+" is not configured on this cluster"))
		} else {
			s.IPFamilies = append(s.IPFamilies, f)
		}
	}
	return errs
}

// defaultHeadlessSelectorlessFamilies: a headless Service without a
// selector may name any families, on any lab; unnamed, the primary one,
// and the other as well unless it is SingleStack.
func (c Cluster) defaultHeadlessSelectorlessFamilies(svc *corev1.Service) {
	s := &svc.Spec
	if len(s.IPFamilies) == 0 {
		s.IPFamilies = []corev1.IPFamily{c.primaryFamily()}
	}
	if len(s.IPFamilies) < 2 && *s.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		s.IPFamilies = append(s.IPFamilies, otherFamily(s.IPFamilies[0]))
	}
}

// matchingPreferDualStack is upstream's
// isMatchingPreferDualStackClusterIPFields: a PreferDualStack Service
// updated with the same cluster IPs and families is left as it is, even
// if the lab's families changed since.
func matchingPreferDualStack(svc, old *corev1.Service) bool {
	if old == nil || svc.Spec.IPFamilyPolicy == nil || old.Spec.Type != svc.Spec.Type {
		return false
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		return false
	}
	if *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyPreferDualStack {
		return false
	}
	if old.Spec.IPFamilyPolicy != nil && *old.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyPreferDualStack {
		return false
	}
	return sameClusterIPs(old, svc) && slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies)
}

// sameClusterIPs is upstream's: the same cluster IPs, in order.
func sameClusterIPs(a, b *corev1.Service) bool {
	return slices.Equal(a.Spec.ClusterIPs, b.Spec.ClusterIPs)
}

// upgradeDowngradeErrors is the API server's update validation of cluster
// IPs and families (validateUpgradeDowngradeClusterIPs and
// validateUpgradeDowngradeIPFamilies): the primary ones never change,
// secondary ones may be added, and released only by a SingleStack policy.
func upgradeDowngradeErrors(svc, old *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	return append(upgradeDowngradeClusterIPErrors(svc, old), upgradeDowngradeFamilyErrors(svc, old)...)
}

func upgradeDowngradeClusterIPErrors(svc, old *corev1.Service) field.ErrorList {
	if isHeadless(old) && isHeadless(svc) {
		return nil
	}
	s, o := svc.Spec, old.Spec
	path := specPath.Child("clusterIPs")
	var errs field.ErrorList
	switch {
	case len(o.ClusterIPs) == len(s.ClusterIPs):
		for i, ip := range o.ClusterIPs {
			if ip != s.ClusterIPs[i] {
				errs = append(errs, field.Invalid(path.Index(i), s.ClusterIPs, "may not change once set"))
			}
		}
	case len(o.ClusterIPs) > len(s.ClusterIPs):
		if len(s.ClusterIPs) == 0 {
			errs = append(errs, field.Invalid(path.Index(0), s.ClusterIPs, "primary clusterIP can not be unset"))
		}
		if len(o.ClusterIPs) > 0 && len(s.ClusterIPs) > 0 && s.ClusterIPs[0] != o.ClusterIPs[0] {
			errs = append(errs, field.Invalid(path.Index(0), s.ClusterIPs, "may not change once set"))
		}
		if len(s.ClusterIPs) == 1 && (s.IPFamilyPolicy == nil || *s.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(specPath.Child("ipFamilyPolicy"), s.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(o.ClusterIPs) > 0 && s.ClusterIPs[0] != o.ClusterIPs[0] {
			errs = append(errs, field.Invalid(path.Index(0), s.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}

func upgradeDowngradeFamilyErrors(svc, old *corev1.Service) field.ErrorList {
	if isHeadless(old) || isHeadless(svc) {
		return nil // to or from headless, or headless: families may change
	}
	s, o := svc.Spec, old.Spec
	path := specPath.Child("ipFamilies")
	var errs field.ErrorList
	switch {
	case len(o.IPFamilies) == len(s.IPFamilies):
		for i, f := range o.IPFamilies {
			if f != s.IPFamilies[i] {
				errs = append(errs, field.Invalid(path.Index(0), s.IPFamilies, "may not change once set"))
			}
		}
	case len(o.IPFamilies) > len(s.IPFamilies):
		if len(s.ClusterIPs) == 0 {
			errs = append(errs, field.Invalid(path.Index(0), s.IPFamilies, "primary ipFamily can not be unset"))
		}
		if len(s.IPFamilies) > 0 && s.IPFamilies[0] != o.IPFamilies[0] {
			errs = append(errs, field.Invalid(path.Index(0), s.ClusterIPs, "may not change once set"))
		}
		if len(s.IPFamilies) == 1 && (s.IPFamilyPolicy == nil || *s.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(specPath.Child("ipFamilyPolicy"), s.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(o.IPFamilies) > 0 && len(s.IPFamilies) > 0 && s.IPFamilies[0] != o.IPFamilies[0] {
			errs = append(errs, field.Invalid(path.Index(0), s.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}
