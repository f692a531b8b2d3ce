package workload

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// CalicoIPAddrsAnnotation asks Calico's IPAM for fixed pod IPs (a JSON list
// of addresses, at most one per IP family); svclab honours it on every CNI
// variant, so a lab can give a pod the very address an article shows.
const CalicoIPAddrsAnnotation = "cni.projectcalico.org/ipAddrs"

// podIPs are the addresses a new pod gets, one per pod CIDR of its node,
// primary first (status.podIPs; status.podIP is the first): in each
// family the one the annotation asks for, else the next free one of the
// node's pod CIDR of that family, not taken by pods nor by the leaving
// ones (pods of the state before the change: they hold their address
// until the lab has started the new pods and stopped them). A
// hostNetwork pod on a node whose IPs are known has the node's IPs, as
// the kubelet reports them.
func podIPs(pod *corev1.Pod, node Node, pods, leaving []*corev1.Pod, source string) ([]corev1.PodIP, error) {
	if pod.Spec.HostNetwork && len(node.IPs) > 0 {
		var out []corev1.PodIP
		for _, ip := range node.IPs {
			out = append(out, corev1.PodIP{IP: ip.String()})
		}
		return out, nil
	}
	where := fmt.Sprintf("Pod %s/%s", pod.Namespace, pod.Name)
	requested, err := requestedPodIPs(pod, node, pods, source, where)
	if err != nil {
		return nil, err
	}
	taken := append(slices.Clip(pods), leaving...)
	var out []corev1.PodIP
	for _, cidr := range node.podCIDRs() {
		ip, ok := requested[familyOfAddr(cidr.Addr())]
		if !ok {
			if ip, err = nextPodIP(cidr, taken); err != nil {
				return nil, errorf(source, "%s: node %s: %v", where, node.Name, err)
			}
		}
		out = append(out, corev1.PodIP{IP: ip.String()})
	}
	return out, nil
}

// requestedPodIPs are the addresses the Calico annotation asks for, by
// family: each a pod address of the node's pod CIDR of its family (not
// its network, gateway or last address) and no other pod's.
func requestedPodIPs(pod *corev1.Pod, node Node, pods []*corev1.Pod, source, where string) (map[corev1.IPFamily]netip.Addr, error) {
	raw, ok := pod.Annotations[CalicoIPAddrsAnnotation]
	if !ok {
		return nil, nil
	}
	cidrs := map[corev1.IPFamily]netip.Prefix{}
	var families []string
	for _, c := range node.podCIDRs() {
		cidrs[familyOfAddr(c.Addr())] = c.Masked()
		families = append(families, string(familyOfAddr(c.Addr())))
	}
	field := "metadata.annotations[" + CalicoIPAddrsAnnotation + "]"
	want := "one " + families[0] + " address"
	if len(families) > 1 {
		want = "at most one address of each family (" + strings.Join(families, ", ") + ")"
	}
	var addrs []string
	if err := json.Unmarshal([]byte(raw), &addrs); err != nil || len(addrs) == 0 || len(addrs) > len(families) {
		return nil, errorf(source, "%s: %s %q: want a JSON list of %s", where, field, raw, want)
	}
	out := map[corev1.IPFamily]netip.Addr{}
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		cidr, known := cidrs[familyOfAddr(ip)]
		if err != nil || ip.Zone() != "" || !known {
			return nil, errorf(source, "%s: %s %q: not an %s address", where, field, a, strings.Join(families, " or "))
		}
		if _, dup := out[familyOfAddr(ip)]; dup {
			return nil, errorf(source, "%s: %s %q: want a JSON list of %s", where, field, raw, want)
		}
		if !cidr.Contains(ip) || ip == cidr.Addr() || ip == cidr.Addr().Next() || !cidr.Contains(ip.Next()) {
			return nil, errorf(source, "%s: %s %s: not a pod address of node %s (its pod CIDR %s, less the network, gateway and broadcast addresses)", where, field, ip, node.Name, cidr)
		}
		for _, p := range pods {
			if hasPodIP(p, ip.String()) {
				return nil, errorf(source, "%s: %s %s: already the IP of pod %s", where, field, ip, p.Name)
			}
		}
		out[familyOfAddr(ip)] = ip
	}
	return out, nil
}

// hasPodIP reports whether ip is one of the pod's addresses.
func hasPodIP(p *corev1.Pod, ip string) bool {
	if p.Status.PodIP == ip {
		return true
	}
	for _, a := range p.Status.PodIPs {
		if a.IP == ip {
			return true
		}
	}
	return false
}

// nextPodIP is host-local IPAM: the lowest free address from the second
// (the first is the node's pod gateway), never the network or last
// (broadcast) address.
func nextPodIP(cidr netip.Prefix, pods []*corev1.Pod) (netip.Addr, error) {
	used := map[netip.Addr]bool{}
	for _, p := range pods {
		if a, err := netip.ParseAddr(p.Status.PodIP); err == nil {
			used[a] = true
		}
		for _, ip := range p.Status.PodIPs {
			if a, err := netip.ParseAddr(ip.IP); err == nil {
				used[a] = true
			}
		}
	}
	cidr = cidr.Masked()
	ip := cidr.Addr().Next().Next()
	for ; cidr.Contains(ip); ip = ip.Next() {
		if !cidr.Contains(ip.Next()) { // the broadcast address
			break
		}
		if !used[ip] {
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("pod CIDR %s has no free address", cidr)
}
