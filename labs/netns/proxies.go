package netns

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/agents/kubelet"
	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/proxy"
)

// The node proxy is the lab's "kube-proxy pod": kube-system/kube-proxy-<node>,
// labelled k8s-app=kube-proxy where a lab lists its pods, a process that
// the node's kubelet runs and restarts (as kubeadm's DaemonSet pod), so a
// node is two processes and the kubelet's supervisor.
//
// startProxy writes the pod's spec for the node's kubelet and starts the
// kubelet if it does not run (its first sync starts the proxy), else asks
// it to sync; it does not wait for the proxy (waitForProxies does), so
// that the nodes' proxies start side by side.
func (l *Lab) startProxy(node string, opts Options) error {
	if err := l.Store.ClearProxyStatus(node); err != nil {
		return err
	}
	if err := l.Store.ClearPodStatus(proxyPodName(node)); err != nil {
		return err
	}
	spec := kubelet.Spec{
		Namespace: proxyNamespace, Name: proxyPodName(node), Node: node, NetNS: network.NamespaceName(l.Name(), node),
		Args: selfexec.Argv(opts.Binary, &selfexec.Proxy{Options: proxy.Options{
			LabDir: l.Store.Dir, NodeName: node, IPTablesBackend: string(l.Topology.Spec.Proxy.IPTablesBackend),
			NodeIPs: l.proxyNodeIPs(node),
		}}),
		Log: proxyLogFile(node), Backoff: opts.RestartBackoff,
	}
	if err := kubelet.WriteSpec(l.Store, spec); err != nil {
		return err
	}
	running := l.supervisorPID(kubeletPod(node)) != 0
	if err := l.ensureKubelet(node, opts); err != nil {
		return err
	}
	if running {
		l.syncKubeletOnce(node)
	}
	return nil
}

// proxyNodeIPs are what the node's proxy is told of its addresses: none on
// an IPv4 lab (the proxy is then single-stack IPv4, as before labs had
// families), the node's addresses, primary first, on an ipv6 or dual lab.
func (l *Lab) proxyNodeIPs(node string) []netip.Addr {
	if l.Topology.Spec.IPFamily == "" || l.Topology.Spec.IPFamily == topology.IPFamilyIPv4 {
		return nil
	}
	for _, n := range l.Topology.Spec.Nodes {
		if n.Name == node {
			addrs := make([]netip.Addr, len(n.IPs))
			for i, p := range n.IPs {
				addrs[i] = p.Addr()
			}
			return addrs
		}
	}
	return nil
}

const proxyNamespace = "kube-system"

func proxyPodName(node string) string { return "kube-proxy-" + node }

func proxyLogFile(node string) string { return "logs/" + node + "-kube-proxy.log" }

func (l *Lab) proxyLog(node string) string { return l.Store.Path(proxyLogFile(node)) }

// proxyPodNode returns the node of a kube-proxy pod's name.
func (l *Lab) proxyPodNode(pod string) (string, bool) {
	node, ok := strings.CutPrefix(pod, "kube-proxy-")
	if !ok {
		return "", false
	}
	for _, n := range l.Topology.Spec.Nodes {
		if n.Name == node {
			return node, true
		}
	}
	return "", false
}

// ProxyPID returns the pid of a node's proxy process (0 if it is not
// running, for example while its supervisor waits out a back-off).
func (l *Lab) ProxyPID(node string) int {
	ps, err := l.podState(proxyPodName(node))
	if err != nil || !ps.running() {
		return 0
	}
	return ps.PID
}

// waitForProxies waits until every node's proxy has programmed the objects
// of generation gen (or newer). It fails at once, naming the node and why,
// when a proxy crash-loops (its supervisor waits out a back-off, or is
// gone) or keeps failing to program that generation (a sync failed and its
// retry failed too, reported during this wait: an error from before is
// retried first), with the end of the proxy's log: a lab never reports
// a change as in place while a node's rules do not have it.
func (l *Lab) waitForProxies(ctx context.Context, gen int64, opts Options) error {
	start := time.Now()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	// A proxy writes its status under proxies/, its supervisor the pod's
	// under pods/: the loop looks again when either changes.
	watch := l.watchStore("proxies", "pods")
	defer watch.Close()
	for {
		statuses, err := l.Store.ProxyStatuses()
		if err != nil {
			return err
		}
		ready := 0
		var pending []string
		for _, n := range l.Topology.Spec.Nodes {
			ps, err := l.podState(proxyPodName(n.Name))
			if err != nil {
				return err
			}
			st, ok := statuses[n.Name]
			if why := ps.failure(); why != "" {
				if ok && st.Error != "" {
					why += "; its last error: " + st.Error
				}
				why += fmt.Sprintf(" (it reads the stored objects and ConfigMap when it restarts; now: svclab delete pod --lab %s -n %s %s)",
					l.Name(), proxyNamespace, proxyPodName(n.Name))
				return l.proxyError(n.Name, fmt.Sprintf("%s is %s", proxyPodName(n.Name), why))
			}
			mine := ok && ps.running() && st.PID == ps.PID
			switch {
			case mine && st.Healthy && st.Generation >= gen:
				ready++
				continue
			case mine && !st.Healthy && st.Error != "" && st.Generation >= gen && st.Failures >= 2 && st.LastSync.After(start):
				return l.proxyError(n.Name, fmt.Sprintf("cannot program generation %d (%d syncs failed in a row): %s", gen, st.Failures, st.Error))
			}
			pending = append(pending, pendingReason(n.Name, ps, st, ok))
		}
		if ready == len(l.Topology.Spec.Nodes) {
			return nil
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("lab %s: interrupted while waiting for the proxies: %w", l.Name(), parent.Err())
			}
			return fmt.Errorf("lab %s: proxies did not program generation %d within %s: %s", l.Name(), gen, opts.Timeout, strings.Join(pending, "; "))
		default:
		}
		watch.wait(ctx)
	}
}

// proxyError is a node proxy's failure, with the end of its log.
func (l *Lab) proxyError(node, why string) error {
	return fmt.Errorf("lab %s: proxy on %s: %s\n%s", l.Name(), node, why, tail(l.proxyLog(node), 10))
}

// pendingReason says what a node's proxy has not done yet.
func pendingReason(node string, ps podState, st labstore.ProxyStatus, ok bool) string {
	switch {
	case !ps.running():
		return node + ": proxy not running (starting or restarting)"
	case !ok || st.PID != ps.PID:
		return node + ": proxy has not synced yet"
	case st.Error != "":
		return fmt.Sprintf("%s: proxy at generation %d, last error: %s", node, st.Generation, st.Error)
	}
	return fmt.Sprintf("%s: proxy at generation %d", node, st.Generation)
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
		out = append(out, ProxyPod{Name: proxyPodName(n.Name), Node: n.Name, Labels: map[string]string{"k8s-app": "kube-proxy"}})
	}
	return out
}

// RestartProxies deletes the proxy "pods" of the given nodes and starts new
// ones, as the DaemonSet would recreate them: the new proxies read the
// kube-system/kube-proxy ConfigMap again. Like upstream, a proxy that stops
// leaves its rules in place, and a proxy that starts does not clean the
// other mode's state. A proxy that cannot start in its configured mode
// exits, as upstream's does, and crash-loops under its supervisor: the
// error names its node and says why; the node keeps the rules it had.
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
		if err := l.stopSupervised(proxyPodName(node)); err != nil {
			return err
		}
		crashPoint("restart:stopped")
		fmt.Fprintf(opts.Out, "pod \"%s\" deleted\n", proxyPodName(node))
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
