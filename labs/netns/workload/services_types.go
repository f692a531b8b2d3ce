package workload

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The API server's bounds on sessionAffinityConfig.clientIP.timeoutSeconds
// (core.MaxClientIPServiceAffinitySeconds, DefaultClientIPServiceAffinitySeconds).
const (
	MaxAffinitySeconds     = 86400
	DefaultAffinitySeconds = 10800
)

// defaultService fills in what the API server's defaulting does
// (SetDefaults_Service in pkg/apis/core/v1/defaults.go) for the fields of
// the Service types: session affinity and its timeout, the traffic
// policies, allocateLoadBalancerNodePorts. Ports are defaulted with the
// port checks.
func defaultService(svc *corev1.Service) {
	s := &svc.Spec
	if s.SessionAffinity == "" {
		s.SessionAffinity = corev1.ServiceAffinityNone
	}
	if s.SessionAffinity == corev1.ServiceAffinityClientIP {
		if c := s.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			timeout := int32(DefaultAffinitySeconds)
			s.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
		}
	}
	if s.Type == "" {
		s.Type = corev1.ServiceTypeClusterIP
	}
	if externallyAccessible(svc) && s.ExternalTrafficPolicy == "" {
		s.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if s.InternalTrafficPolicy == nil && s.Type != corev1.ServiceTypeExternalName {
		cluster := corev1.ServiceInternalTrafficPolicyCluster
		s.InternalTrafficPolicy = &cluster
	}
	if s.Type == corev1.ServiceTypeLoadBalancer && s.AllocateLoadBalancerNodePorts == nil {
		yes := true
		s.AllocateLoadBalancerNodePorts = &yes
	}
}

// externallyAccessible is upstream's apiservice.ExternallyAccessible.
func externallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer ||
		svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

// needsHealthCheck is upstream's apiservice.NeedsHealthCheck: a
// LoadBalancer Service with externalTrafficPolicy Local gets a
// healthCheckNodePort.
func needsHealthCheck(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

var (
	supportedServiceTypes = sets.New(corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort,
		corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)
	supportedAffinities = sets.New(corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)
	supportedETPs       = sets.New(corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)
	supportedITPs       = sets.New(corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)
)

// validateServiceTypes checks a defaulted Service's type-dependent fields
// with the API server's rules (validateService in
// pkg/apis/core/validation/validation.go, with StrictIPCIDRValidation on as
// in 1.36): the type, ExternalName's name and the fields it may not have,
// session affinity and its timeout, external IPs, load balancer source
// ranges (the field or the annotation), allocateLoadBalancerNodePorts,
// loadBalancerClass, the traffic policies and healthCheckNodePort. Ports
// and cluster IPs are checked where they are allocated.
func validateServiceTypes(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	for _, check := range []func(*corev1.Service) field.ErrorList{
		typeErrors,
		externalNameErrors,
		sessionAffinityErrors,
		externalIPErrors,
		sourceRangeErrors,
		loadBalancerFieldErrors,
		trafficPolicyErrors,
	} {
		errs = append(errs, check(svc)...)
	}
	return errs
}

var specPath = field.NewPath("spec")

// typeErrors: the type is one the API server knows.
func typeErrors(svc *corev1.Service) field.ErrorList {
	if !supportedServiceTypes.Has(svc.Spec.Type) {
		return field.ErrorList{field.NotSupported(specPath.Child("type"), svc.Spec.Type, sets.List(supportedServiceTypes))}
	}
	return nil
}

// externalNameErrors: an ExternalName Service has a DNS name (a CNAME,
// which may end in a dot) and no cluster IPs or IP families.
func externalNameErrors(svc *corev1.Service) field.ErrorList {
	s := &svc.Spec
	if s.Type != corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	if s.ClusterIP != "" || len(s.ClusterIPs) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
	}
	if len(s.IPFamilies) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
	}
	if s.IPFamilyPolicy != nil {
		errs = append(errs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
	}
	if cname := strings.TrimSuffix(s.ExternalName, "."); cname == "" {
		errs = append(errs, field.Required(specPath.Child("externalName"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(cname) {
			errs = append(errs, field.Invalid(specPath.Child("externalName"), cname, msg))
		}
	}
	return errs
}

// sessionAffinityErrors: ClientIP or None; ClientIP's timeout in range,
// None without a config.
func sessionAffinityErrors(svc *corev1.Service) field.ErrorList {
	s := &svc.Spec
	var errs field.ErrorList
	if !supportedAffinities.Has(s.SessionAffinity) {
		errs = append(errs, field.NotSupported(specPath.Child("sessionAffinity"), s.SessionAffinity, sets.List(supportedAffinities)))
	}
	switch s.SessionAffinity {
	case corev1.ServiceAffinityClientIP:
		timeout := specPath.Child("sessionAffinityConfig", "clientIP", "timeoutSeconds")
		if t := *s.SessionAffinityConfig.ClientIP.TimeoutSeconds; t <= 0 || t > MaxAffinitySeconds {
			// The API server's message, although 86400 itself is allowed.
			errs = append(errs, field.Invalid(timeout, t, fmt.Sprintf("must be greater than 0 and less than %d", MaxAffinitySeconds)))
		}
	case corev1.ServiceAffinityNone:
		if s.SessionAffinityConfig != nil {
			errs = append(errs, field.Forbidden(specPath.Child("sessionAffinityConfig"), fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone)))
		}
	}
	return errs
}

// externalIPErrors: each external IP is an IP an endpoint may have.
func externalIPErrors(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	for i, ip := range svc.Spec.ExternalIPs {
		path := specPath.Child("externalIPs").Index(i)
		if e := validation.IsValidIPForLegacyField(path, ip, true, nil); len(e) > 0 {
			errs = append(errs, e...)
		} else {
			errs = append(errs, endpointIPErrors(path, ip)...)
		}
	}
	return errs
}

// sourceRangeErrors: load balancer source ranges (the field, else the
// annotation) are CIDRs, on a LoadBalancer Service only.
func sourceRangeErrors(svc *corev1.Service) field.ErrorList {
	s := &svc.Spec
	var errs field.ErrorList
	if len(s.LoadBalancerSourceRanges) > 0 {
		// The API server's path, with its capital L.
		path := specPath.Child("LoadBalancerSourceRanges")
		if s.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(path, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, r := range s.LoadBalancerSourceRanges {
			errs = append(errs, validation.IsValidCIDRForLegacyField(path.Index(i), strings.TrimSpace(r), true, nil)...)
		}
	} else if val, set := svc.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]; set {
		path := field.NewPath("metadata", "annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
		if s.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(path, "may only be used when `type` is 'LoadBalancer'"))
		}
		if val = strings.TrimSpace(val); val != "" {
			for _, r := range strings.Split(val, ",") {
				errs = append(errs, validation.IsValidCIDRForLegacyField(path, strings.TrimSpace(r), true, nil)...)
			}
		}
	}
	return errs
}

// loadBalancerFieldErrors: allocateLoadBalancerNodePorts,
// loadBalancerClass (a qualified name) and loadBalancerIP on a
// LoadBalancer Service only.
func loadBalancerFieldErrors(svc *corev1.Service) field.ErrorList {
	s := &svc.Spec
	var errs field.ErrorList
	if s.AllocateLoadBalancerNodePorts != nil && s.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if s.LoadBalancerClass != nil {
		if s.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(specPath.Child("loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"))
		} else {
			for _, msg := range validation.IsQualifiedName(*s.LoadBalancerClass) {
				errs = append(errs, field.Invalid(specPath.Child("loadBalancerClass"), *s.LoadBalancerClass, msg))
			}
		}
	}
	if s.LoadBalancerIP != "" && s.Type != corev1.ServiceTypeLoadBalancer {
		// The API server drops the field on other types; a lab says so.
		errs = append(errs, field.Forbidden(specPath.Child("loadBalancerIP"), "may only be used when `type` is 'LoadBalancer'"))
	}
	return errs
}

// trafficPolicyErrors: externalTrafficPolicy only on an externally
// accessible Service, healthCheckNodePort only when it needs one, and
// known internal and external policies.
func trafficPolicyErrors(svc *corev1.Service) field.ErrorList {
	s := &svc.Spec
	var errs field.ErrorList
	if !externallyAccessible(svc) {
		if s.ExternalTrafficPolicy != "" {
			errs = append(errs, field.Invalid(specPath.Child("externalTrafficPolicy"), s.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	} else if !supportedETPs.Has(s.ExternalTrafficPolicy) {
		errs = append(errs, field.NotSupported(specPath.Child("externalTrafficPolicy"), s.ExternalTrafficPolicy, sets.List(supportedETPs)))
	}
	if !needsHealthCheck(svc) && s.HealthCheckNodePort != 0 {
		errs = append(errs, field.Invalid(specPath.Child("healthCheckNodePort"), s.HealthCheckNodePort, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
	}
	if s.InternalTrafficPolicy != nil && !supportedITPs.Has(*s.InternalTrafficPolicy) {
		errs = append(errs, field.NotSupported(specPath.Child("internalTrafficPolicy"), *s.InternalTrafficPolicy, sets.List(supportedITPs)))
	}
	return errs
}

// endpointIPErrors is the API server's ValidateEndpointIP, which it applies
// to external IPs: no unspecified, loopback, link-local or link-local
// multicast address.
func endpointIPErrors(path *field.Path, ip string) field.ErrorList {
	addr, ok := parseIP(ip)
	if !ok {
		return field.ErrorList{field.Invalid(path, ip, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if addr.IsUnspecified() {
		errs = append(errs, field.Invalid(path, ip, fmt.Sprintf("may not be unspecified (%v)", ip)))
	}
	if addr.IsLoopback() {
		errs = append(errs, field.Invalid(path, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if addr.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(path, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if addr.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(path, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}
