package netns

import (
	"fmt"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/netns/workload"
)

// Lab is a running lab: its topology and its store.
type Lab struct {
	Topology *topology.Lab
	Store    *labstore.Store
}

// CheckName validates a lab name that comes from the command line (--name,
// --lab) as the name in a lab file is validated: a DNS-1123 label of at
// most topology.MaxLabNameLen characters. Open, Delete and Create refuse a
// name that fails it before touching anything.
func CheckName(name string) error { return topology.ValidateLabName(name) }

// Open returns the running lab called name.
func Open(name string) (*Lab, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	st := labstore.Open(name)
	if !st.Exists() {
		if in, _ := st.ReadIntent(); in != nil {
			return nil, interruptedError(name, in)
		}
		return nil, fmt.Errorf("lab %q: not found (svclab get labs lists the labs)", name)
	}
	topo, err := topology.Load(st.Path("lab.yaml"))
	if err != nil {
		return nil, fmt.Errorf("lab %q: %w", name, err)
	}
	return &Lab{Topology: topo, Store: st}, nil
}

// Name is the lab's name.
func (l *Lab) Name() string { return l.Topology.Name() }

// Namespace returns the network namespace of a node, client, the router or a
// pod of the lab.
func (l *Lab) Namespace(host string) (string, error) {
	if host == "router" {
		return network.NamespaceName(l.Name(), host), nil
	}
	for _, h := range l.Topology.Hosts() {
		if h.Name == host {
			return network.NamespaceName(l.Name(), host), nil
		}
	}
	objs, _, err := l.Store.ReadObjects()
	if err != nil {
		return "", err
	}
	if objs.Pod(host) != nil {
		return network.NamespaceName(l.Name(), host), nil
	}
	return "", fmt.Errorf("lab %s: host %q: no such node, client or pod", l.Name(), host)
}

// Cluster is the lab as the workload logic sees it.
func (l *Lab) Cluster() workload.Cluster {
	c := workload.Cluster{
		ServiceSubnet:     l.Topology.Spec.ServiceSubnet,
		ServiceSubnets:    l.Topology.Spec.ServiceSubnets,
		LoadBalancerPool:  l.Topology.Spec.LoadBalancer.Pool,
		ReservedHostNames: []string{"router"},
	}
	for _, n := range l.Topology.Spec.Nodes {
		// Node.IPs stays empty: the lab runs every pod, hostNetwork or
		// not, in a network namespace of its own at its pod IPs.
		c.Nodes = append(c.Nodes, workload.Node{Name: n.Name, PodCIDR: n.PodCIDR, PodCIDRs: n.PodCIDRs})
	}
	for _, h := range l.Topology.Hosts() {
		c.ReservedHostNames = append(c.ReservedHostNames, h.Name)
	}
	return c
}
