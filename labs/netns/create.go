package netns

import (
	"context"
	"fmt"
	"time"

	"github.com/svclab/svclab/internal/hostprog"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
)

// Create builds the lab described by the topology file: its namespaces and
// links, its object store with the kube-proxy ConfigMap and the cluster
// DNS (kube-system/kube-dns and its coredns pod), every host's
// resolv.conf, and one proxy per node, and waits until every proxy has
// synced. On any error it removes
// everything it made. It returns the lab and how long bring-up took.
func Create(ctx context.Context, topologyFile string, opts Options) (*Lab, time.Duration, error) {
	start := time.Now()
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, 0, err
	}
	labFile, topo, err := readLabFile(topologyFile)
	if err != nil {
		return nil, 0, err
	}
	if err := hostprog.Ensure(ctx, opts.Out, hostprog.Needs(hostprog.Lab)...); err != nil {
		return nil, 0, err
	}
	name := topo.Name()
	st := labstore.Open(name)
	// One lock covers the check and the build: of two creates of one name,
	// the second sees the first's lab and leaves it alone.
	unlock, err := st.Lock(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer unlock()
	if in, err := st.ReadIntent(); err != nil {
		return nil, 0, err
	} else if in != nil && (in.Op == labstore.OpCreate || in.Op == labstore.OpDelete) {
		return nil, 0, fmt.Errorf("lab %q: already exists, but its %s was interrupted (svclab delete lab --name %s removes it)", name, in.Op, name)
	}
	if st.Exists() {
		return nil, 0, fmt.Errorf("lab %q: already exists (svclab delete lab --name %s)", name, name)
	}
	if present, err := network.Namespaces(name); err != nil {
		return nil, 0, err
	} else if len(present) > 0 {
		return nil, 0, fmt.Errorf("lab %q: namespaces of that lab exist without its state (a crashed lab?); run svclab delete lab --name %s", name, name)
	}
	lab := &Lab{Topology: topo, Store: st}
	if err := lab.create(ctx, labFile, opts); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("lab %s: create interrupted: %w", name, err)
		}
		if derr := deleteLocked(name); derr != nil {
			return nil, 0, fmt.Errorf("%w (and cleaning up failed: %v)", err, derr)
		}
		return nil, 0, fmt.Errorf("%w; rolled back: lab %s deleted", err, name)
	}
	return lab, time.Since(start), nil
}

// readLabFile reads the lab file once and validates those bytes; Create
// stores the same bytes (journalCreate), so the lab.yaml every later
// command loads is the file that was validated, even if the file changes
// while the lab is built.
func readLabFile(path string) ([]byte, *topology.Lab, error) {
	data, err := topology.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	topo, err := topology.Parse(data, path)
	if err != nil {
		return nil, nil, err
	}
	return data, topo, nil
}

// create builds the lab from labFile, the bytes of its validated lab file;
// its caller holds the lock. The journal says "create" from before the
// first file until the last proxy has synced, so a create killed half way
// shows as such (Interrupted) and only `svclab delete lab` touches it.
func (l *Lab) create(ctx context.Context, labFile []byte, opts Options) error {
	if err := l.journalCreate(labFile); err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "building network of lab %s (%s, %d nodes, %d clients)\n", l.Name(), l.Topology.Spec.CNI, len(l.Topology.Spec.Nodes), len(l.Topology.Spec.Clients))
	if _, err := network.Build(l.Topology); err != nil {
		return err
	}
	crashPoint("create:network")
	if err := ctx.Err(); err != nil {
		return err
	}
	objs, err := l.Cluster().Apply(&labstore.State{ConfigMaps: []*corev1.ConfigMap{kubeProxyConfigMap(l.Topology)}}, clusterDNSManifests(l.Topology), "the lab's cluster DNS")
	if err != nil {
		return err
	}
	if err := l.writeHostResolvConfs(); err != nil {
		return err
	}
	gen, err := l.Store.WriteObjects(objs)
	if err != nil {
		return err
	}
	for _, n := range l.Topology.Spec.Nodes {
		if err := l.startProxy(n.Name, opts); err != nil {
			return err
		}
	}
	crashPoint("create:proxies")
	// The cluster DNS pod starts while the proxies make their first sync.
	hosts, err := l.hosts()
	if err != nil {
		return err
	}
	for _, pod := range objs.Pods {
		if err := l.startPod(ctx, hosts, pod, opts); err != nil {
			return err
		}
	}
	if err := l.waitForProxies(ctx, gen, opts); err != nil {
		return err
	}
	return l.Store.ClearIntent()
}

// journalCreate records the create in the lab's journal, then stores
// labFile as the lab's lab.yaml: the bytes readLabFile validated, not the
// file read again.
func (l *Lab) journalCreate(labFile []byte) error {
	if err := l.Store.WriteIntent(&labstore.Intent{Op: labstore.OpCreate}); err != nil {
		return err
	}
	crashPoint("create:intent")
	return l.Store.WriteFile("lab.yaml", labFile)
}
