package kind

import (
	"context"
	"slices"

	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
)

// List returns the kind clusters on the running Docker daemon (none when
// no daemon runs), with what svclab recorded about them.
func List(ctx context.Context) ([]Cluster, error) {
	d, ok := dockerhost.Running(ctx)
	if !ok {
		return nil, nil
	}
	defer d.Done()
	provider := newProvider(d, nil)
	names, err := provider.List()
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []Cluster
	for _, n := range names {
		c := Cluster{Name: n, DockerHost: d.Host}
		if st, ok := loadState(n); ok {
			c = *st
		}
		if nodes, err := provider.ListNodes(n); err == nil {
			c.Nodes = c.Nodes[:0]
			for _, nd := range nodes {
				c.Nodes = append(c.Nodes, nd.String())
			}
			slices.Sort(c.Nodes)
		}
		out = append(out, c)
	}
	return out, nil
}

// Kubeconfig returns the cluster's kubeconfig: external (127.0.0.1:port,
// reachable inside the daemon's namespace) or internal (the control-plane
// container's name:6443, reachable from the nodes).
func Kubeconfig(ctx context.Context, name string, internal bool) (string, error) {
	d, ok := dockerhost.Running(ctx)
	if !ok {
		return "", errNoDocker
	}
	defer d.Done()
	return newProvider(d, nil).KubeConfig(name, internal)
}
