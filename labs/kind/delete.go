package kind

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
)

// Delete deletes a cluster: its logs are exported first (always, into
// LogsDir/<name>-<time>), then kind deletes its containers, then svclab's
// dockerd stops if no cluster is left on it (deleting its namespace and
// restoring the host). Deleting a cluster that does not exist is not an
// error, and cleans up what a crash may have left.
func Delete(ctx context.Context, name string, out io.Writer) error {
	if out == nil {
		out = io.Discard
	}
	if err := ValidateName(name); err != nil {
		return err
	}
	d, ok := dockerhost.Running(ctx)
	if !ok {
		if !dockerhost.Leftovers() {
			removeState(name)
			fmt.Fprintf(out, "cluster %s does not exist\n", name)
			return nil
		}
		// A crash left svclab's dockerd's namespace or state behind:
		// start it again to delete what it holds, then stop it.
		var err error
		if d, err = dockerhost.Ensure(ctx, out); err != nil {
			return err
		}
	}
	provider := newProvider(d, out)
	err := deleteCluster(ctx, provider, name, out)
	if st, ok := loadState(name); ok {
		removeLoadBalancerRoute(ctx, st)
	}
	removeState(name)
	if rerr := dockerhost.Release(ctx, d, out); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// deleteCluster exports the logs, then deletes the cluster if it exists.
func deleteCluster(ctx context.Context, provider *cluster.Provider, name string, out io.Writer) error {
	names, err := provider.List()
	if err != nil {
		return fmt.Errorf("listing kind clusters: %w", err)
	}
	if !slices.Contains(names, name) {
		fmt.Fprintf(out, "cluster %s does not exist\n", name)
		return nil
	}
	dir := filepath.Join(LogsDir, fmt.Sprintf("%s-%s", name, time.Now().UTC().Format("20060102T150405Z")))
	if err := ExportLogs(provider, name, dir); err != nil {
		fmt.Fprintf(out, "exporting the logs of %s: %v (deleting it anyway)\n", name, err)
	} else {
		fmt.Fprintf(out, "logs of %s exported to %s\n", name, dir)
	}
	if err := provider.Delete(name, kubeconfigPath(name)); err != nil {
		return fmt.Errorf("kind delete cluster %s: %w", name, err)
	}
	fmt.Fprintf(out, "deleted cluster %s\n", name)
	return nil
}

// ExportLogs writes the cluster's logs (kind's export: every node's
// journal, containers' logs, kubelet and containerd) into dir; a dir
// (and parents) it makes only root may enter (0700): the logs are lab state.
func ExportLogs(provider *cluster.Provider, name, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return provider.CollectLogs(name, dir)
}
