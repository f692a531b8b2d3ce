package labs

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/network"
	"github.com/svclab/svclab/labs/process"
	"github.com/svclab/svclab/labs/selfexec"
	"github.com/svclab/svclab/proxy"
)

// The node proxy is the lab's "kube-proxy pod": one process per node,
// labelled k8s-app=kube-proxy where a lab lists its pods.
func (l *Lab) startProxy(node string, opts Options) error {
	if err := l.Store.ClearProxyStatus(node); err != nil {
		return err
	}
	args := selfexec.Argv(opts.Binary, &selfexec.Proxy{Options: proxy.Options{
		LabDir: l.Store.Dir, NodeName: node, IPTablesBackend: string(l.Topology.Spec.Proxy.IPTablesBackend),
	}})
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
// the wait at once with its error and the end of its log — unless
// skipBroken, when a proxy that is known broken (it reported an error
// before this wait) is skipped with a warning: applying objects to a lab
// succeeds like kubectl apply does while a kube-proxy pod crash-loops.
func (l *Lab) waitForProxies(ctx context.Context, gen int64, opts Options, skipBroken ...bool) error {
	broken := map[string]bool{}
	if len(skipBroken) > 0 && skipBroken[0] {
		statuses, err := l.Store.ProxyStatuses()
		if err != nil {
			return err
		}
		for node, st := range statuses {
			if !st.Healthy && st.Error != "" {
				broken[node] = true
				fmt.Fprintf(opts.Out, "warning: the proxy on %s is not running (%s); its rules stay as they were\n", node, st.Error)
			}
		}
	}
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
			case broken[n.Name]:
				ready++
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

// tail returns the last n lines of a process's log, indented, for error
// messages.
func tail(path string, n int) string {
	lines := process.LogTail(path, n)
	if lines == "" {
		return ""
	}
	return "  " + path + ":\n    " + strings.ReplaceAll(lines, "\n", "\n    ")
}

// ProxyPod is a node's proxy as `kubectl get pods -n kube-system` would show
// the kube-proxy DaemonSet's pod.
type ProxyPod struct {
	Name   string // kube-proxy-<node>
	Node   string
	Labels map[string]string
}

// ProxyPods lists the lab's kube-proxy "pods", one per node.
func (l *Lab) ProxyPods() []ProxyPod {
	var out []ProxyPod
	for _, n := range l.Topology.Spec.Nodes {
		out = append(out, ProxyPod{Name: "kube-proxy-" + n.Name, Node: n.Name, Labels: map[string]string{"k8s-app": "kube-proxy"}})
	}
	return out
}

// RestartProxies deletes the proxy "pods" of the given nodes and starts new
// ones, as the DaemonSet would recreate them: the new proxies read the
// kube-system/kube-proxy ConfigMap again. Like upstream, a proxy that stops
// leaves its rules in place, and a proxy that starts does not clean the
// other mode's state. The error lists the proxies that do not come up
// healthy (for example because of a bad configuration); their nodes keep
// the rules they had.
func (l *Lab) RestartProxies(ctx context.Context, nodes []string, opts Options) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	unlock, err := l.lock(ctx, opts)
	if err != nil {
		return err
	}
	defer unlock()
	// The journal names the nodes first: a restart killed between stopping
	// a proxy and starting its successor is finished by the next command.
	if err := l.Store.WriteIntent(&labstore.Intent{Op: labstore.OpRestartProxies, Nodes: nodes}); err != nil {
		return err
	}
	for _, node := range nodes {
		if pid := l.ProxyPID(node); pid != 0 {
			process.StopPID(pid, 5*time.Second)
		}
		crashPoint("restart:stopped")
		fmt.Fprintf(opts.Out, "pod \"kube-proxy-%s\" deleted\n", node)
		if err := l.startProxy(node, opts); err != nil {
			return err
		}
	}
	if err := l.Store.ClearIntent(); err != nil {
		return err
	}
	gen, err := l.Store.Generation()
	if err != nil {
		return err
	}
	return l.waitForProxies(ctx, gen, opts)
}
