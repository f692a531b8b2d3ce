package labs

import (
	"context"
	"fmt"
	"time"

	"github.com/svclab/svclab/internal/hostprog"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/network"
	"github.com/svclab/svclab/labs/topology"
)

// Create builds the lab described by the topology file: its namespaces and
// links, its object store with the kube-proxy ConfigMap, and one proxy per
// node, and waits until every proxy has synced. On any error it removes
// everything it made. It returns the lab and how long bring-up took.
func Create(ctx context.Context, topologyFile string, opts Options) (*Lab, time.Duration, error) {
	start := time.Now()
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, 0, err
	}
	topo, err := topology.Load(topologyFile)
	if err != nil {
		return nil, 0, err
	}
	if err := hostprog.Ensure(ctx, opts.Out, hostprog.Needs(hostprog.Lab)...); err != nil {
		return nil, 0, err
	}
	name := topo.Name()
	st := labstore.Open(name)
	if st.Exists() {
		return nil, 0, fmt.Errorf("lab %q: already exists (svclab delete lab --name %s)", name, name)
	}
	if present, err := network.Namespaces(name); err != nil {
		return nil, 0, err
	} else if len(present) > 0 {
		return nil, 0, fmt.Errorf("lab %q: namespaces of that lab exist without its state (a crashed lab?); run svclab delete lab --name %s", name, name)
	}
	lab := &Lab{Topology: topo, Store: st}
	if err := lab.create(ctx, topologyFile, opts); err != nil {
		if derr := Delete(name); derr != nil {
			err = fmt.Errorf("%w (and cleaning up failed: %v)", err, derr)
		}
		return nil, 0, err
	}
	return lab, time.Since(start), nil
}

func (l *Lab) create(ctx context.Context, topologyFile string, opts Options) error {
	unlock, err := l.Store.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	raw, err := topology.ReadFile(topologyFile)
	if err != nil {
		return err
	}
	if err := l.Store.WriteFile("lab.yaml", raw); err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "building network of lab %s (%s, %d nodes, %d clients)\n", l.Name(), l.Topology.Spec.CNI, len(l.Topology.Spec.Nodes), len(l.Topology.Spec.Clients))
	if _, err := network.Build(l.Topology); err != nil {
		return err
	}
	gen, err := l.Store.WriteObjects(&labstore.State{ConfigMaps: []*corev1.ConfigMap{kubeProxyConfigMap(l.Topology)}})
	if err != nil {
		return err
	}
	for _, n := range l.Topology.Spec.Nodes {
		if err := l.startProxy(n.Name, opts); err != nil {
			return err
		}
	}
	return l.waitForProxies(ctx, gen, opts)
}
