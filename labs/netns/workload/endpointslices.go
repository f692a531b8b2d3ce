package workload

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/svclab/svclab/internal/labstore"
)

// Limits of the API server's EndpointSlice validation
// (pkg/apis/discovery/validation).
const (
	maxSliceEndpoints = 1000
	maxSliceAddresses = 100
	maxSlicePorts     = 100
	maxTopologyLabels = 16
)

// controllerManagedBy is the endpointslice.kubernetes.io/managed-by value of
// the slices the EndpointSlice controller writes; every other slice is the
// user's, and the controller leaves it alone.
const controllerManagedBy = "endpointslice-controller.k8s.io"

// applyEndpointSlice validates a hand-written EndpointSlice as the API server
// does (ValidateEndpointSliceCreate, after v1 defaulting: a port's name
// defaults to "" and its protocol to TCP) and stores it. Such a slice
// belongs to the Service its kubernetes.io/service-name label names; the
// proxies use it for that Service whether or not the Service has a
// selector. A slice may not claim to be the controller's.
func applyEndpointSlice(st *labstore.State, s *discoveryv1.EndpointSlice, source string) error {
	defaultNamespace(&s.ObjectMeta)
	if err := checkMeta(source, "EndpointSlice", s.ObjectMeta); err != nil {
		return err
	}
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Name == nil {
			empty := ""
			p.Name = &empty
		}
		if p.Protocol == nil {
			tcp := corev1.ProtocolTCP
			p.Protocol = &tcp
		}
	}
	errs := validateSlice(s)
	if s.Labels[discoveryv1.LabelManagedBy] == controllerManagedBy {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "labels").Key(discoveryv1.LabelManagedBy), controllerManagedBy, "the EndpointSlice controller's own value: a hand-written slice must not carry it (the controller would replace the slice)"))
	}
	for _, old := range st.EndpointSlices {
		if old.Namespace == s.Namespace && old.Name == s.Name && old.Labels[discoveryv1.LabelManagedBy] == controllerManagedBy {
			errs = append(errs, field.Duplicate(field.NewPath("metadata", "name"), s.Name+" (the EndpointSlice controller's slice of Service "+old.Labels[discoveryv1.LabelServiceName]+")"))
		}
	}
	if err := fieldErrors(source, "EndpointSlice", s.ObjectMeta, errs); err != nil {
		return err
	}
	st.EndpointSlices = replaceOrAdd(st.EndpointSlices, s, sameName[*discoveryv1.EndpointSlice](s.ObjectMeta))
	return nil
}

// validateSlice is upstream's ValidateEndpointSlice without the metadata.
func validateSlice(s *discoveryv1.EndpointSlice) field.ErrorList {
	var errs field.ErrorList
	switch s.AddressType {
	case "":
		errs = append(errs, field.Required(field.NewPath("addressType"), ""))
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), s.AddressType, []string{"FQDN", "IPv4", "IPv6"}))
	}
	errs = append(errs, validateSliceEndpoints(s.Endpoints, s.AddressType, field.NewPath("endpoints"))...)
	return append(errs, validateSlicePorts(s.Ports, field.NewPath("ports"))...)
}

func validateSliceEndpoints(endpoints []discoveryv1.Endpoint, addrType discoveryv1.AddressType, path *field.Path) field.ErrorList {
	if len(endpoints) > maxSliceEndpoints {
		return field.ErrorList{field.TooMany(path, len(endpoints), maxSliceEndpoints)}
	}
	var errs field.ErrorList
	for i, ep := range endpoints {
		idx := path.Index(i)
		addrs := idx.Child("addresses")
		if len(ep.Addresses) == 0 {
			errs = append(errs, field.Required(addrs, "must contain at least 1 address"))
		} else if len(ep.Addresses) > maxSliceAddresses {
			errs = append(errs, field.TooMany(addrs, len(ep.Addresses), maxSliceAddresses))
		}
		for j, a := range ep.Addresses {
			errs = append(errs, validateSliceAddress(a, addrType, addrs.Index(j))...)
		}
		topology := idx.Child("deprecatedTopology")
		if len(ep.DeprecatedTopology) > maxTopologyLabels {
			errs = append(errs, field.TooMany(topology, len(ep.DeprecatedTopology), maxTopologyLabels))
		}
		errs = append(errs, metav1validation.ValidateLabels(ep.DeprecatedTopology, topology)...)
		if ep.Hostname != nil {
			for _, msg := range validation.IsDNS1123Label(*ep.Hostname) {
				errs = append(errs, field.Invalid(idx.Child("hostname"), *ep.Hostname, msg))
			}
		}
		if ep.NodeName != nil {
			for _, msg := range apivalidation.NameIsDNSSubdomain(*ep.NodeName, false) {
				errs = append(errs, field.Invalid(idx.Child("nodeName"), *ep.NodeName, msg))
			}
		}
	}
	return errs
}

// validateSliceAddress checks one address for its slice's type: IPv4 and
// IPv6 addresses must be of that family and not special (unspecified,
// loopback, link-local, multicast: ValidateNonSpecialIP), FQDN a domain.
func validateSliceAddress(a string, addrType discoveryv1.AddressType, path *field.Path) field.ErrorList {
	switch addrType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		ip, err := netip.ParseAddr(a)
		if err != nil || ip.Zone() != "" || ip.Is4In6() {
			return field.ErrorList{field.Invalid(path, a, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")}
		}
		if addrType == discoveryv1.AddressTypeIPv4 && !ip.Is4() {
			return field.ErrorList{field.Invalid(path, a, "must be a valid IPv4 address")}
		}
		if addrType == discoveryv1.AddressTypeIPv6 && !ip.Is6() {
			return field.ErrorList{field.Invalid(path, a, "must be a valid IPv6 address")}
		}
		switch {
		case ip.IsUnspecified():
			return field.ErrorList{field.Invalid(path, a, "may not be unspecified (0.0.0.0)")}
		case ip.IsLoopback():
			return field.ErrorList{field.Invalid(path, a, "may not be in the loopback range (127.0.0.0/8, ::1/128)")}
		case ip.IsLinkLocalUnicast():
			return field.ErrorList{field.Invalid(path, a, "may not be in the link-local range (169.254.0.0/16, fe80::/10)")}
		case ip.IsLinkLocalMulticast():
			return field.ErrorList{field.Invalid(path, a, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")}
		case ip.IsMulticast():
			return field.ErrorList{field.Invalid(path, a, "may not be in the multicast range")}
		}
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(path, a)
	}
	return nil
}

func validateSlicePorts(ports []discoveryv1.EndpointPort, path *field.Path) field.ErrorList {
	if len(ports) > maxSlicePorts {
		return field.ErrorList{field.TooMany(path, len(ports), maxSlicePorts)}
	}
	var errs field.ErrorList
	names := map[string]bool{}
	for i, p := range ports {
		idx := path.Index(i)
		if *p.Name != "" {
			for _, msg := range validation.IsDNS1123Label(*p.Name) {
				errs = append(errs, field.Invalid(idx.Child("name"), *p.Name, msg))
			}
		}
		if names[*p.Name] {
			errs = append(errs, field.Duplicate(idx.Child("name"), *p.Name))
		}
		names[*p.Name] = true
		switch *p.Protocol {
		case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		default:
			errs = append(errs, field.NotSupported(idx.Child("protocol"), *p.Protocol, []string{"SCTP", "TCP", "UDP"}))
		}
		if p.Port != nil {
			for _, msg := range validation.IsValidPortNum(int(*p.Port)) {
				errs = append(errs, field.Invalid(idx.Child("port"), *p.Port, msg))
			}
		}
		if p.AppProtocol != nil {
			for _, msg := range validation.IsQualifiedName(*p.AppProtocol) {
				errs = append(errs, field.Invalid(idx.Child("appProtocol"), *p.AppProtocol, msg))
			}
		}
	}
	return errs
}

// handWritten are the slices the EndpointSlice controller does not manage.
func handWritten(slices []*discoveryv1.EndpointSlice) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, s := range slices {
		if s.Labels[discoveryv1.LabelManagedBy] != controllerManagedBy {
			out = append(out, s)
		}
	}
	return out
}
