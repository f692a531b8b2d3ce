package upstream

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	ipvskernel "github.com/svclab/svclab/proxy/ipvs/kernel"
)

// ipvsCheck asks the kernel over netlink (moby/ipvs, as `ipvsadm -Ln -t
// VIP:PORT` would) for one virtual server's destinations. Each side adds
// a destination with its own request, so the check sees the very one the
// change made. services finds a slice's Service (its cluster IP), by
// namespace/name.
type ipvsCheck struct {
	k        *ipvskernel.Netlink
	services map[string]*corev1.Service
}

// newIPVSCheck opens the kernel of this process's namespace; svcs are
// the Services whose slices the endpoint check may be asked about.
func newIPVSCheck(svcs []*corev1.Service) (*ipvsCheck, error) {
	k, err := ipvskernel.Open("")
	if err != nil {
		return nil, err
	}
	if err := k.IPVSAvailable(); err != nil {
		k.Close()
		return nil, err
	}
	c := &ipvsCheck{k: k, services: map[string]*corev1.Service{}}
	for _, s := range svcs {
		c.services[s.Namespace+"/"+s.Name] = s
	}
	return c, nil
}

func (c *ipvsCheck) endpoint(sl *discoveryv1.EndpointSlice) error {
	svc := c.services[sl.Namespace+"/"+sl.Labels[discoveryv1.LabelServiceName]]
	if svc == nil {
		return fmt.Errorf("no Service for the slice %s/%s", sl.Namespace, sl.Name)
	}
	want := sl.Endpoints[0].Addresses[0] + ":" + benchTargetPort
	return c.lookFor(svc, want)
}

func (c *ipvsCheck) service(svc *corev1.Service) error { return c.lookFor(svc, "") }

// lookFor wants svc's virtual server to have the destination want ("IP:port"),
// or any destination when want is "".
func (c *ipvsCheck) lookFor(svc *corev1.Service, want string) error {
	vs := clusterIPVirtualServer(svc)
	dests, err := c.k.RealServers(vs)
	if err != nil {
		return fmt.Errorf("not in the kernel: %s: %w", vs.Key(), err)
	}
	for _, d := range dests {
		if want == "" || d.Key() == want {
			return nil
		}
	}
	return fmt.Errorf("not in the kernel: %s has %d destinations, not %q", vs.Key(), len(dests), want)
}

// clusterIPVirtualServer is the IPVS service of svc's cluster IP and
// first port.
func clusterIPVirtualServer(svc *corev1.Service) ipvskernel.VirtualServer {
	return ipvskernel.VirtualServer{
		Address:  netip.MustParseAddr(svc.Spec.ClusterIP),
		Protocol: ipvskernel.Protocol(svc.Spec.Ports[0].Protocol),
		Port:     uint16(svc.Spec.Ports[0].Port),
	}
}
