package kind

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
	"github.com/svclab/svclab/labs/kind/internal/nodeimage"
)

// Create makes a cluster, one named step after another (createSteps, each
// announced on opts.Out as it starts and marked as it ends): it
// checks the input, makes sure Docker runs and the images exist (building
// what is missing), creates the cluster with kind, loads svclab's images
// into the nodes, installs the pod network (and svclab's proxy), waits for
// the nodes and system pods, and sets up the load balancer. A failure
// names its step; what the steps before it made is undone (the cluster
// deleted, svclab's dockerd released).
func Create(ctx context.Context, opts CreateOptions) (*Cluster, error) {
	start := time.Now()
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	cr := &creation{ctx: ctx, opts: opts, out: opts.Out}
	if err := runSteps(cr, createSteps()); err != nil {
		return nil, err
	}
	cr.hostChanges.Record(cr.out)
	c := cr.c
	c.Took = time.Since(start)
	cr.d.Done() // the cluster keeps the daemon; this process is done with it
	if err := saveState(c); err != nil {
		return c, err
	}
	return c, nil
}

// createSteps are Create's steps, in order. The first ones only check
// and read (no Docker yet: a missing program or a bad config fails before
// anything starts); the ones that make something undo it when a later
// step fails (see creation.onFailure).
func createSteps() []createStep {
	return []createStep{
		{name: "read the cluster config", run: (*creation).readConfig},
		{name: "settle the name, CNI and proxy", run: (*creation).settle},
		{name: "fetch upstream Calico's manifest", run: (*creation).fetchCalicoManifest, applies: upstreamCalicoOnly},
		{name: "find the svclab binary", run: (*creation).findSvclabBinary},
		{name: "check the host's programs", run: (*creation).checkHostPrograms},
		{name: "start Docker", run: (*creation).startDocker},
		{name: "check Docker for upstream Calico", run: (*creation).checkDockerForCalico, applies: upstreamCalicoOnly},
		{name: "track the host's sysctls", run: (*creation).trackHostChanges},
		{name: "check the name is free", run: (*creation).checkNameFree},
		{name: "build the node image", run: (*creation).buildNodeImage},
		{name: "build svclab's images", run: (*creation).ensureImages},
		{name: "create the cluster with kind", run: (*creation).createCluster},
		{name: "list the nodes", run: (*creation).listNodes},
		{name: "load the images into the nodes", run: (*creation).loadNodeImages},
		{name: "install the pod network", run: (*creation).installPodNetwork},
		{name: "wait for the nodes and system pods", run: (*creation).waitForReady},
		{name: "set up the load balancer", run: (*creation).installLoadBalancer},
	}
}

// upstreamCalicoOnly: the step is for --cni calico alone.
func upstreamCalicoOnly(cr *creation) bool { return cr.s.CNI == CNICalico }

// creation is what the steps of Create share: the input, then what each
// step found or made for the next ones.
type creation struct {
	ctx  context.Context
	opts CreateOptions
	out  io.Writer

	cfg            *v1alpha4.Cluster // the user's config, as read
	s              Settings
	calicoManifest string // upstream's, verified (--cni calico only)
	bin            string // the svclab binary the images are made of

	d           *dockerhost.Daemon
	provider    *cluster.Provider
	hostChanges *dockerhost.HostChanges

	built *nodeimage.Result
	refs  []string // svclab's images the nodes get

	c     *Cluster     // kind created it
	nodes []nodes.Node // its nodes
	cp    nodes.Node   // its control plane

	// undo is what to do, last first, when a step fails: the steps that
	// make something add to it.
	undo []func(cause error)
}

// onFailure makes undo run (after the undos added later) when a step
// fails.
func (cr *creation) onFailure(undo func(cause error)) { cr.undo = append(cr.undo, undo) }

// name is the cluster's name as far as it is known.
func (cr *creation) name() string {
	if cr.s.Name != "" {
		return cr.s.Name
	}
	return cr.opts.Name
}

// svclabBinary is path, else $SVCLAB_BIN, else this executable; it must
// exist.
func svclabBinary(path string) (string, error) {
	if path == "" {
		path = os.Getenv("SVCLAB_BIN")
	}
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", err
		}
		path = exe
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("the svclab binary for the cluster's images: %w (set SVCLAB_BIN)", err)
	}
	return path, nil
}

func hasIPVS() bool {
	_, err := os.Stat("/proc/net/ip_vs")
	return err == nil
}
