package workload

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/svclab/svclab/proxy/model"
)

// EndpointSlicesFor computes what the EndpointSlice controller would write
// for each Service with a selector (a selector-less Service gets none: its
// slices are written by hand): per address type of the Service (one per
// IP family, in the order of its ipFamilies, as upstream's reconciler),
// the pods it selects with an address of that family, terminating ones
// included with their conditions (endpointFor), grouped by the ports they
// resolve to (a named targetPort can mean different numbers on different
// pods, which is why upstream groups endpoints by port mapping). Slice
// names are stable (<service>-<hash of the port mapping, and of the
// address type but IPv4's>) so an unchanged Service keeps its slices
// across applies.
func EndpointSlicesFor(services []*corev1.Service, pods []*corev1.Pod) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, svc := range services {
		if svc.Spec.Selector == nil || svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue // the controller gives an ExternalName Service no endpoints
		}
		for _, addrType := range addressTypesOf(svc) {
			out = append(out, slicesOfAddressType(svc, pods, addrType)...)
		}
	}
	return out
}

// slicesOfAddressType are a Service's slices of one address type.
func slicesOfAddressType(svc *corev1.Service, pods []*corev1.Pod, addrType discoveryv1.AddressType) []*discoveryv1.EndpointSlice {
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	groups := map[string]*discoveryv1.EndpointSlice{}
	for _, pod := range pods {
		if pod.Namespace != svc.Namespace || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		addrs := podAddressesOf(pod, addrType)
		if len(addrs) == 0 {
			continue
		}
		ports := resolvePorts(svc, pod)
		key := portKey(ports)
		slice, ok := groups[key]
		if !ok {
			slice = newSlice(svc, ports, key, addrType)
			groups[key] = slice
		}
		slice.Endpoints = append(slice.Endpoints, endpointFor(svc, pod, addrs))
		if w, ok := pod.Annotations[WeightAnnotation]; ok {
			setWeight(slice, addrs[0], w)
		}
	}
	if len(groups) == 0 {
		// The controller keeps one empty slice with the Service's ports.
		ports := resolvePorts(svc, nil)
		groups[""] = newSlice(svc, ports, "", addrType)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []*discoveryv1.EndpointSlice
	for _, k := range keys {
		slice := groups[k]
		sort.Slice(slice.Endpoints, func(i, j int) bool { return slice.Endpoints[i].Addresses[0] < slice.Endpoints[j].Addresses[0] })
		out = append(out, slice)
	}
	return out
}

// addressTypesOf is upstream's getAddressTypesForService: the Service's
// ipFamilies, else the family of its cluster IP, else (headless, written
// before dual-stack) IPv4.
func addressTypesOf(svc *corev1.Service) []discoveryv1.AddressType {
	var out []discoveryv1.AddressType
	for _, f := range svc.Spec.IPFamilies {
		switch f {
		case corev1.IPv4Protocol:
			out = append(out, discoveryv1.AddressTypeIPv4)
		case corev1.IPv6Protocol:
			out = append(out, discoveryv1.AddressTypeIPv6)
		}
	}
	if len(out) > 0 {
		return out
	}
	if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone && familyOf(ip) == corev1.IPv6Protocol {
		return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv6}
	}
	return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4}
}

// podAddressesOf is upstream's getEndpointAddresses: the pod's IPs of the
// address type (status.podIPs; status.podIP for a pod stored without
// them).
func podAddressesOf(pod *corev1.Pod, addrType discoveryv1.AddressType) []string {
	ips := pod.Status.PodIPs
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = []corev1.PodIP{{IP: pod.Status.PodIP}}
	}
	var out []string
	for _, ip := range ips {
		a, err := netip.ParseAddr(ip.IP)
		if err != nil {
			continue
		}
		if (familyOfAddr(a) == corev1.IPv6Protocol) == (addrType == discoveryv1.AddressTypeIPv6) {
			out = append(out, a.Unmap().String())
		}
	}
	return out
}

func newSlice(svc *corev1.Service, ports []discoveryv1.EndpointPort, key string, addrType discoveryv1.AddressType) *discoveryv1.EndpointSlice {
	hashed := svc.Name + "/" + key
	if addrType != discoveryv1.AddressTypeIPv4 {
		hashed = svc.Name + "/" + string(addrType) + "/" + key
	}
	return &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: svc.Namespace,
			Name:      svc.Name + "-" + hashOf(hashed)[:5],
			Labels: map[string]string{
				discoveryv1.LabelServiceName: svc.Name,
				discoveryv1.LabelManagedBy:   controllerManagedBy,
			},
		},
		AddressType: addrType,
		Ports:       ports,
	}
}

// resolvePorts maps each Service port to the pod's port: a number stays, a
// name is looked up among the pod's containerPorts (nil pod: names unresolved).
func resolvePorts(svc *corev1.Service, pod *corev1.Pod) []discoveryv1.EndpointPort {
	var out []discoveryv1.EndpointPort
	for _, sp := range svc.Spec.Ports {
		name, proto := sp.Name, sp.Protocol
		ep := discoveryv1.EndpointPort{Name: &name, Protocol: &proto}
		switch {
		case sp.TargetPort.Type == intstr.Int:
			port := sp.TargetPort.IntVal
			ep.Port = &port
		case pod != nil:
			if port, ok := namedContainerPort(pod, sp.TargetPort.StrVal, sp.Protocol); ok {
				ep.Port = &port
			} else {
				continue // the pod does not expose that name: no endpoint port
			}
		}
		out = append(out, ep)
	}
	return out
}

func namedContainerPort(pod *corev1.Pod, name string, proto corev1.Protocol) (int32, bool) {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			pp := p.Protocol
			if pp == "" {
				pp = corev1.ProtocolTCP
			}
			if p.Name == name && pp == proto {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

func portKey(ports []discoveryv1.EndpointPort) string {
	var parts []string
	for _, p := range ports {
		port := int32(0)
		if p.Port != nil {
			port = *p.Port
		}
		parts = append(parts, fmt.Sprintf("%s=%s/%d", *p.Name, *p.Protocol, port))
	}
	return strings.Join(parts, ",")
}

// endpointFor is the endpoint of a pod (at addrs, its addresses of the
// slice's type) as upstream's controller writes it
// (pkg/controller/util/endpointslice): serving is the pod's Ready
// condition, terminating whether it is being deleted, ready is serving and
// not terminating — unless the Service publishes not-ready addresses, when
// it is always true. A pod with a hostname in the Service's subdomain (a
// StatefulSet's pod and its governing Service) gives the endpoint its
// hostname.
func endpointFor(svc *corev1.Service, pod *corev1.Pod, addrs []string) discoveryv1.Endpoint {
	serving := podReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	node := pod.Spec.NodeName
	ep := discoveryv1.Endpoint{
		Addresses:  addrs,
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		NodeName:   &node,
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name},
	}
	if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name {
		hostname := pod.Spec.Hostname
		ep.Hostname = &hostname
	}
	return ep
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WeightAnnotation on a pod gives it an IPVS weight (1-65535). The lab's
// endpoint-slice controller copies it into the slice's
// svclab.dev/endpoint-weights annotation, which the proxy's IPVS mode uses
// for the real server's weight (see proxy/model.WeightsAnnotation).
const WeightAnnotation = "svclab.dev/weight"

func setWeight(slice *discoveryv1.EndpointSlice, ip, weight string) {
	weights := map[string]int{}
	if raw, ok := slice.Annotations[model.WeightsAnnotation]; ok {
		json.Unmarshal([]byte(raw), &weights)
	}
	w, _ := strconv.Atoi(weight) // validated when the pod was applied
	weights[ip] = w
	data, _ := json.Marshal(weights)
	if slice.Annotations == nil {
		slice.Annotations = map[string]string{}
	}
	slice.Annotations[model.WeightsAnnotation] = string(data)
}
