package workshop

import (
	"fmt"
	"strconv"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
)

// LabFacts are a live lab's facts, read from its store and network plan
// each time a template asks (a step may have just changed them).
type LabFacts struct{ Lab *netns.Lab }

// ClusterIP is the Service's spec.clusterIP.
func (f LabFacts) ClusterIP(namespace, name string) (string, error) {
	objs, _, err := f.Lab.Store.ReadObjects()
	if err != nil {
		return "", err
	}
	svc := objs.Service(namespace, name)
	if svc == nil {
		return "", fmt.Errorf("lab %s: no Service %s/%s", f.Lab.Name(), namespace, name)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == "None" {
		return "", fmt.Errorf("lab %s: Service %s/%s has no cluster IP", f.Lab.Name(), namespace, name)
	}
	return svc.Spec.ClusterIP, nil
}

// NodePort is the node port of the Service's port called port (or numbered port).
func (f LabFacts) NodePort(namespace, name, port string) (int, error) {
	objs, _, err := f.Lab.Store.ReadObjects()
	if err != nil {
		return 0, err
	}
	svc := objs.Service(namespace, name)
	if svc == nil {
		return 0, fmt.Errorf("lab %s: no Service %s/%s", f.Lab.Name(), namespace, name)
	}
	for _, p := range svc.Spec.Ports {
		if p.Name == port || strconv.Itoa(int(p.Port)) == port {
			if p.NodePort == 0 {
				return 0, fmt.Errorf("lab %s: Service %s/%s port %s has no node port", f.Lab.Name(), namespace, name, port)
			}
			return int(p.NodePort), nil
		}
	}
	return 0, fmt.Errorf("lab %s: Service %s/%s has no port %q", f.Lab.Name(), namespace, name, port)
}

// PodIP is the pod's status.podIP.
func (f LabFacts) PodIP(pod string) (string, error) {
	objs, _, err := f.Lab.Store.ReadObjects()
	if err != nil {
		return "", err
	}
	p := objs.Pod(pod)
	if p == nil || p.Status.PodIP == "" {
		return "", fmt.Errorf("lab %s: no pod %s with an address", f.Lab.Name(), pod)
	}
	return p.Status.PodIP, nil
}

// HostIP is a node's or client's LAN address.
func (f LabFacts) HostIP(host string) (string, error) {
	for _, h := range f.Lab.Topology.Hosts() {
		if h.Name == host {
			return h.IP.Addr().String(), nil
		}
	}
	return "", fmt.Errorf("lab %s: no node or client %q", f.Lab.Name(), host)
}

// VTEPIP is a node's VXLAN device address.
func (f LabFacts) VTEPIP(node string) (string, error) {
	v, err := f.vtep(node)
	if err != nil {
		return "", err
	}
	return v.Addr.String(), nil
}

// VXLANDevice is a node's VXLAN device: flannel.1, or vxlan.calico.
func (f LabFacts) VXLANDevice(node string) (string, error) {
	v, err := f.vtep(node)
	return v.Device, err
}

// VNI is a node's VXLAN network identifier.
func (f LabFacts) VNI(node string) (int, error) {
	v, err := f.vtep(node)
	return v.VNI, err
}

// VXLANPort is a node's VXLAN UDP port.
func (f LabFacts) VXLANPort(node string) (int, error) {
	v, err := f.vtep(node)
	return v.Port, err
}

// CNI is the lab's CNI.
func (f LabFacts) CNI() string { return string(f.Lab.Topology.Spec.CNI) }

// vtep is a node's VXLAN device as the lab's network plan makes it.
func (f LabFacts) vtep(node string) (network.VTEP, error) {
	plan, err := network.PlanLab(f.Lab.Topology)
	if err != nil {
		return network.VTEP{}, err
	}
	h, ok := plan.Host(node)
	if !ok || h.Node == nil || !h.Node.VTEP.Addr.IsValid() {
		return network.VTEP{}, fmt.Errorf("lab %s: no node %q with a VXLAN device", f.Lab.Name(), node)
	}
	return h.Node.VTEP, nil
}

// ClusterIPs are the Service's spec.clusterIPs (spec.clusterIP when a
// stored Service has no list).
func (f LabFacts) ClusterIPs(namespace, name string) ([]string, error) {
	objs, _, err := f.Lab.Store.ReadObjects()
	if err != nil {
		return nil, err
	}
	svc := objs.Service(namespace, name)
	if svc == nil {
		return nil, fmt.Errorf("lab %s: no Service %s/%s", f.Lab.Name(), namespace, name)
	}
	if len(svc.Spec.ClusterIPs) > 0 {
		return svc.Spec.ClusterIPs, nil
	}
	return []string{svc.Spec.ClusterIP}, nil
}

// PodIPs are the pod's status.podIPs.
func (f LabFacts) PodIPs(pod string) ([]string, error) {
	objs, _, err := f.Lab.Store.ReadObjects()
	if err != nil {
		return nil, err
	}
	p := objs.Pod(pod)
	if p == nil || p.Status.PodIP == "" {
		return nil, fmt.Errorf("lab %s: no pod %s with an address", f.Lab.Name(), pod)
	}
	ips := make([]string, 0, len(p.Status.PodIPs))
	for _, ip := range p.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 {
		ips = append(ips, p.Status.PodIP)
	}
	return ips, nil
}

// HostIPs are a node's or client's LAN addresses, primary first.
func (f LabFacts) HostIPs(host string) ([]string, error) {
	for _, h := range f.Lab.Topology.Hosts() {
		if h.Name == host {
			ips := make([]string, len(h.IPs))
			for i, p := range h.IPs {
				ips[i] = p.Addr().String()
			}
			if len(ips) == 0 {
				ips = append(ips, h.IP.Addr().String())
			}
			return ips, nil
		}
	}
	return nil, fmt.Errorf("lab %s: no node or client %q", f.Lab.Name(), host)
}
