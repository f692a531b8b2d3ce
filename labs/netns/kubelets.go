package netns

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/agents/kubelet"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/netns/network"
)

// The servers of a node's pods run in one process per node, the node's
// kubelet (labs/agents/kubelet), itself under a supervisor; it also runs
// the node's proxy as a process of its own (proxies.go). The lab writes a pod's spec to the store, then asks the
// kubelet to sync, and the kubelet's answer is the acknowledgement: the
// server is bound to its ports, told that its pod terminates, or closed.
// The lab's DNS pods keep a process of their own.

// kubeletPod is the name a node's kubelet's supervisor reports under
// (pods/<name>.json, run/<name>.pid): the underscore keeps it apart from
// every pod's name, a DNS-1123 subdomain.
func kubeletPod(node string) string { return "kubelet_" + node }

// kubeletStarts keeps two pods of one node from starting its kubelet twice.
var kubeletStarts sync.Mutex

// ensureKubelet starts the node's kubelet unless its supervisor runs: when
// the node's proxy starts, or after the supervisor was killed.
func (l *Lab) ensureKubelet(node string, opts Options) error {
	kubeletStarts.Lock()
	defer kubeletStarts.Unlock()
	if l.supervisorPID(kubeletPod(node)) != 0 {
		return nil
	}
	log, err := l.Store.Confine("logs", node+"_kubelet.log")
	if err != nil {
		return err
	}
	_, err = l.startSupervised(supervised{
		namespace: proxyNamespace, pod: kubeletPod(node), node: node, host: node, log: log,
		argv: selfexec.Argv(opts.Binary, &selfexec.Kubelet{LabDir: l.Store.Dir, Node: node}),
	}, opts)
	return err
}

// syncKubelet asks the node's kubelet to sync — starting it first when none
// answers and its supervisor is not running — and, while its supervisor says
// it is starting, waits for its answer (a kubelet answers after its own
// first sync).
func (l *Lab) syncKubelet(ctx context.Context, node string, opts Options) (kubelet.Reply, error) {
	ns := network.NamespaceName(l.Name(), node)
	deadline := time.Now().Add(opts.Timeout)
	for poll := time.Millisecond; ; poll = min(2*poll, 50*time.Millisecond) {
		r, err := kubelet.Sync(ctx, ns)
		if err == nil {
			return r, nil
		}
		if err := l.ensureKubelet(node, opts); err != nil {
			return r, err
		}
		ps, serr := l.podState(kubeletPod(node))
		if serr != nil {
			return r, serr
		}
		log, _ := l.Store.Confine("logs", node+"_kubelet.log")
		if why := ps.failure(); why != "" {
			return r, fmt.Errorf("the kubelet of node %s does not run: %s\n%s", node, why, tail(log, 10))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return r, fmt.Errorf("the kubelet of node %s does not answer after %s: %w\n%s", node, opts.Timeout, err, tail(log, 10))
		}
		time.Sleep(poll)
	}
}

// startServedPod has the node's kubelet start the pod's server, and returns
// once it is bound to the pod's TCP and UDP ports.
func (l *Lab) startServedPod(ctx context.Context, pod *corev1.Pod, tcp, udp []int, opts Options) error {
	if err := l.Store.ClearPodStatus(pod.Name); err != nil {
		return err
	}
	var ips []string
	for _, ip := range podIPs(pod) {
		ips = append(ips, ip.String())
	}
	spec := kubelet.Spec{
		Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName, NetNS: network.NamespaceName(l.Name(), pod.Name),
		PodIPs: ips, Ports: tcp, UDPPorts: udp, DelayShutdown: delayShutdown(pod),
	}
	if err := kubelet.WriteSpec(l.Store, spec); err != nil {
		return err
	}
	r, err := l.syncKubelet(ctx, pod.Spec.NodeName, opts)
	if err != nil {
		return fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	if why, failed := r.Failed[pod.Name]; failed {
		log, _ := l.Store.Confine("logs", pod.Name+".log")
		return fmt.Errorf("server of pod %s does not run: %s\n%s", pod.Name, why, tail(log, 10))
	}
	return nil
}

// stopServedPod closes a pod's server if a node's kubelet runs it, and
// forgets its status; served is false for a pod no kubelet runs.
func (l *Lab) stopServedPod(name string) (served bool, err error) {
	node, ok := kubelet.SpecNode(l.Store, name)
	if !ok {
		return false, nil
	}
	// The status and pid file first, the spec last: a stop cut short
	// before the spec goes is done again through it, and one cut short
	// after leaves nothing that names the kubelet as the pod's process.
	if err := l.Store.ClearPodStatus(name); err != nil {
		return true, err
	}
	if err := l.Store.RemoveFile("run", name+".pid"); err != nil {
		return true, err
	}
	if err := kubelet.RemoveSpec(l.Store, node, name); err != nil {
		return true, err
	}
	l.syncKubeletOnce(node)
	return true, nil
}

// syncKubeletOnce asks a node's kubelet, if it runs, to sync, without
// waiting for one that starts: a kubelet that does not answer closes what
// it should at its next sync (every kubelet syncs when it starts).
func (l *Lab) syncKubeletOnce(node string) {
	if node == "" || l.supervisorPID(kubeletPod(node)) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kubelet.Sync(ctx, network.NamespaceName(l.Name(), node)) //nolint:errcheck // see above
}

// terminateServedPods tells the kubelets of the terminating pods they run
// that the pods terminate (the kubelet's SIGTERM), each once, and returns
// the pods no kubelet runs.
func (l *Lab) terminateServedPods(pods []*corev1.Pod) (others []*corev1.Pod) {
	nodes := map[string]bool{}
	for _, p := range pods {
		node, ok := kubelet.SpecNode(l.Store, p.Name)
		if !ok {
			others = append(others, p)
			continue
		}
		spec, found, err := kubelet.ReadSpec(l.Store, node, p.Name)
		if err != nil || !found || spec.Deadline != nil {
			continue
		}
		deadline := p.DeletionTimestamp.Time
		spec.Deadline = &deadline
		if kubelet.WriteSpec(l.Store, spec) == nil {
			nodes[node] = true
		}
	}
	for node := range nodes {
		l.syncKubeletOnce(node)
	}
	return others
}
