package labs

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/svclab/svclab/labs/network"
	"github.com/svclab/svclab/labs/process"
)

// The node proxy is the lab's "kube-proxy pod": one process per node,
// labelled k8s-app=kube-proxy where a lab lists its pods.
func (l *Lab) startProxy(node string, opts Options) error {
	if err := l.Store.ClearProxyStatus(node); err != nil {
		return err
	}
	args := []string{opts.Binary, "proxy", "--lab-dir", l.Store.Dir, "--node", node}
	if b := l.Topology.Spec.Proxy.IPTablesBackend; b != "" {
		args = append(args, "--iptables-backend", string(b))
	}
	_, err := process.Start(process.Spec{
		Namespace: network.NamespaceName(l.Name(), node),
		Args:      args,
		LogFile:   l.proxyLog(node),
		PIDFile:   l.proxyPIDFile(node),
	})
	return err
}

func (l *Lab) proxyLog(node string) string     { return l.Store.Path("logs", node+"-kube-proxy.log") }
func (l *Lab) proxyPIDFile(node string) string { return l.Store.Path("run", node+"-kube-proxy.pid") }

// ProxyPID returns the pid of a node's proxy (0 if it is not running).
func (l *Lab) ProxyPID(node string) int {
	data, err := os.ReadFile(l.proxyPIDFile(node))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if !process.Alive(pid) {
		return 0
	}
	return pid
}

// waitForProxies waits until every node's proxy has synced the objects of
// generation gen (or newer). A proxy that reports an error, or dies, ends
// the wait at once with its error and the end of its log.
func (l *Lab) waitForProxies(ctx context.Context, gen int64, opts Options) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		statuses, err := l.Store.ProxyStatuses()
		if err != nil {
			return err
		}
		ready := 0
		for _, n := range l.Topology.Spec.Nodes {
			st, ok := statuses[n.Name]
			switch {
			case ok && st.Error != "" && !st.Healthy:
				return fmt.Errorf("lab %s: proxy on %s: %s\n%s", l.Name(), n.Name, st.Error, tail(l.proxyLog(n.Name), 10))
			case ok && st.Generation >= gen && st.Healthy:
				ready++
			case l.ProxyPID(n.Name) == 0:
				return fmt.Errorf("lab %s: proxy on %s exited\n%s", l.Name(), n.Name, tail(l.proxyLog(n.Name), 10))
			}
		}
		if ready == len(l.Topology.Spec.Nodes) {
			return nil
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("lab %s: interrupted while waiting for the proxies: %w", l.Name(), parent.Err())
			}
			return fmt.Errorf("lab %s: proxies did not sync generation %d within %s", l.Name(), gen, opts.Timeout)
		case <-tick.C:
		}
	}
}

// tail returns the last n lines of a file, indented, for error messages.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + path + ":\n    " + strings.Join(lines, "\n    ")
}
