package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/svclab/svclab/internal/kubeconfig"
	"github.com/svclab/svclab/scenarios/kit"
)

// Options configure a Target.
type Options struct {
	// Source names where the rest.Config came from (the kubeconfig file,
	// or kubeconfig.InClusterSource), for error messages.
	Source string
	// Image is svclab's image (netexec, traffic and the node agent);
	// PullPolicy its pull policy (Never on clusters svclab loaded it into).
	Image, PullPolicy string
	// Out receives progress lines; nil is quiet.
	Out io.Writer
	// ReadyTimeout bounds every wait (default 3 minutes).
	ReadyTimeout time.Duration
	// NodeSelector picks the nodes the node agent runs on (nil is every
	// node it tolerates); ParseNodeSelector reads it from "k=v,k2=v2".
	// The scenarios use only the nodes the agent runs on.
	NodeSelector map[string]string
	// TolerateAll lets the node agent run on tainted nodes (control
	// planes) too; without it the agent tolerates no taint.
	TolerateAll bool
	// ProxyConfig ("NAMESPACE/NAME") is the ConfigMap holding the proxy's
	// KubeProxyConfiguration; "" is kubeadm's kube-system/kube-proxy.
	ProxyConfig string
	// RunID labels every object of this run (svclab.dev/conformance-run);
	// "" makes one from the time and a random suffix.
	RunID string
}

// Target is a Kubernetes cluster as the scenarios' target.
type Target struct {
	cfg       *rest.Config // guarded: every request checked against roles
	clientset *kubernetes.Clientset
	client    klient.Client
	res       *resources.Resources
	opts      Options
	roles     []Role
	runID     string
	agentNS   string
	// proxyNS/proxyName is the proxy's ConfigMap (Options.ProxyConfig).
	proxyNS, proxyName string
	// lease is this run's heartbeat; nil until the agent's namespace exists.
	lease *runLease
	// saved is the proxy configuration this run saved before changing it.
	saved *savedProxyConfig
	// clock is time for the sweep's waits (a fake one in tests).
	clock clock

	// proxyFacts is what Proxy found (proxyfacts.go).
	proxyFacts proxyFactsCache

	dialProxyOnce sync.Once
	dialProxy     *connectProxy
	dialProxyErr  error
}

// New checks that the cluster answers (a clear error naming the
// kubeconfig and server when it does not, with nothing created), sweeps
// what killed earlier runs left (saying what), then starts the node agent
// on the nodes Options pick and this run's heartbeat.
func New(ctx context.Context, cfg *rest.Config, opts Options) (*Target, error) {
	t, err := connect(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	if _, err := t.sweep(ctx, false); err != nil {
		return nil, fmt.Errorf("sweeping what earlier runs left: %w", err)
	}
	ns, err := t.createNamespace(ctx, "svclab-agent", ComponentAgent)
	if err != nil {
		return nil, err
	}
	t.agentNS = ns
	if t.lease, err = t.holdRunLease(ctx, ns); err != nil {
		t.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	fmt.Fprintf(t.opts.Out, "node agent: DaemonSet %s/%s (%s), run %s\n", ns, agentName, t.opts.Image, t.runID)
	if err := t.startAgent(ctx); err != nil {
		t.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return t, nil
}

// connect makes the clients, every request guarded by the RBAC table, and
// checks that the cluster answers. It creates nothing.
func connect(ctx context.Context, cfg *rest.Config, opts Options) (*Target, error) {
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 3 * time.Minute
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.RunID == "" {
		opts.RunID = newRunID(time.Now())
	}
	roles, err := Permissions(opts.ProxyConfig)
	if err != nil {
		return nil, err
	}
	proxyNS, proxyName, _ := ParseProxyConfig(opts.ProxyConfig) // Permissions checked it
	cfg = guarded(cfg, roles)
	if cfg.QPS == 0 {
		// client-go's default, 5 requests a second, throttles the suite's
		// polls; upstream's e2e framework allows 20 (burst 50).
		cfg.QPS, cfg.Burst = 20, 50
	}
	c, err := klient.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Source, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Source, err)
	}
	if err := kubeconfig.Reach(ctx, cfg, opts.Source); err != nil {
		return nil, err
	}
	return &Target{cfg: cfg, clientset: cs, client: c, res: c.Resources(), opts: opts, roles: roles, runID: opts.RunID,
		proxyNS: proxyNS, proxyName: proxyName, clock: realClock{}}, nil
}

func (t *Target) Backend() string { return "kubernetes" }

// Close puts back the proxy configuration this run changed (if it did),
// deletes the node agent's namespace, and ends the run's heartbeat.
func (t *Target) Close(ctx context.Context) error {
	var errs []error
	if t.saved != nil {
		if err := t.restoreProxyConfig(ctx, t.saved); err != nil {
			errs = append(errs, err)
		} else {
			t.saved = nil
		}
	}
	if t.agentNS != "" {
		if err := t.deleteNamespace(ctx, t.agentNS); err != nil {
			errs = append(errs, err)
		}
	}
	if t.lease != nil {
		t.lease.stop()
	}
	if t.dialProxy != nil {
		t.dialProxy.Close()
	}
	return errors.Join(errs...)
}

// Workspace is a namespace of its own, privileged (the scenarios' pods
// are ordinary, but some clusters enforce Pod Security on every
// namespace).
func (t *Target) Workspace(ctx context.Context, prefix string, nodes int, family corev1.IPFamily) (kit.Workspace, error) {
	all, err := t.nodes(ctx)
	if err != nil {
		return nil, err
	}
	if len(all) < nodes {
		return nil, kit.ErrTooFewNodes
	}
	ns, err := t.createNamespace(ctx, "svclab-"+prefix, ComponentWorkspace)
	if err != nil {
		return nil, err
	}
	return kit.InFamily(&workspace{t: t, ns: ns, family: family}, family), nil
}

// createNamespace makes a namespace prefix-RANDOM labelled as this run's.
func (t *Target) createNamespace(ctx context.Context, prefix, component string) (string, error) {
	name := prefix + "-" + suffix()
	labels := runLabels(t.runID)
	labels[ComponentLabel] = component
	labels["pod-security.kubernetes.io/enforce"] = "privileged"
	labels["pod-security.kubernetes.io/warn"] = "privileged"
	labels["pod-security.kubernetes.io/audit"] = "privileged"
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := t.res.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return name, nil
}

// deleteNamespace deletes a namespace and waits until it is gone.
func (t *Target) deleteNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := t.res.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s: %w", name, err)
	}
	return t.poll(ctx, "namespace "+name+" deleted", func() (bool, error) {
		err := t.res.Get(ctx, name, "", &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// nodes are the nodes the scenarios use, by name: the cluster's nodes the
// node agent runs on (all of them before the agent starts).
func (t *Target) nodes(ctx context.Context) ([]kit.Node, error) {
	var list corev1.NodeList
	if err := t.res.List(ctx, &list); err != nil {
		return nil, err
	}
	var agents map[string]string
	if t.agentNS != "" {
		var err error
		if agents, err = t.agentPods(ctx); err != nil {
			return nil, err
		}
	}
	var out []kit.Node
	for _, n := range list.Items {
		if _, ok := agents[n.Name]; agents != nil && !ok {
			continue
		}
		node := kit.Node{Name: n.Name}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && !strings.Contains(a.Address, ":") {
				node.IP = mustAddr(a.Address)
			}
		}
		for _, a := range internalIPs(n) {
			node.IPs = append(node.IPs, mustAddr(a))
		}
		if !node.IP.IsValid() && len(node.IPs) > 0 {
			node.IP = node.IPs[0] // an IPv6-only node
		}
		out = append(out, node)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// stoppedPoll is an error that ends a poll at once: waiting will not help.
type stoppedPoll struct{ err error }

func (s stoppedPoll) Error() string { return s.err.Error() }
func (s stoppedPoll) Unwrap() error { return s.err }

// stopPolling marks err as one that ends a poll at once.
func stopPolling(err error) error { return stoppedPoll{err} }

// poll calls done every half second until it says true, errors for good
// (ctx, or an error of stopPolling) or ReadyTimeout passes; the last
// error goes into the message.
func (t *Target) poll(ctx context.Context, what string, done func() (bool, error)) error {
	deadline := time.Now().Add(t.opts.ReadyTimeout)
	var last error
	for {
		ok, err := done()
		if ok {
			return nil
		}
		var stop stoppedPoll
		if errors.As(err, &stop) {
			return fmt.Errorf("waiting for %s: %w", what, stop.err)
		}
		last = err
		if time.Now().After(deadline) {
			if last != nil {
				return fmt.Errorf("waiting %s for %s: %v", t.opts.ReadyTimeout, what, last)
			}
			return fmt.Errorf("waiting %s for %s: timed out", t.opts.ReadyTimeout, what)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// apply creates the objects of manifests in namespace ns, each labelled
// as this run's, and with no service-account token in its pods (the
// scenarios' pods never talk to the API server).
func (t *Target) apply(ctx context.Context, ns, manifests string) error {
	return decoder.DecodeEach(ctx, strings.NewReader(manifests), decoder.CreateHandler(t.res),
		decoder.MutateNamespace(ns), decoder.MutateLabels(runLabels(t.runID)), decoder.MutateOption(withoutToken))
}

// withoutToken turns off the service-account token of a Pod, or of the
// pods of a workload's template.
func withoutToken(obj k8s.Object) error {
	var spec *corev1.PodSpec
	switch o := obj.(type) {
	case *corev1.Pod:
		spec = &o.Spec
	case *appsv1.Deployment:
		spec = &o.Spec.Template.Spec
	case *appsv1.DaemonSet:
		spec = &o.Spec.Template.Spec
	case *appsv1.StatefulSet:
		spec = &o.Spec.Template.Spec
	case *appsv1.ReplicaSet:
		spec = &o.Spec.Template.Spec
	default:
		return nil
	}
	no := false
	spec.AutomountServiceAccountToken = &no
	return nil
}

// daemonSetReady says whether a DaemonSet runs a ready, current pod on
// every node it should.
func daemonSetReady(ds *appsv1.DaemonSet) bool {
	s := ds.Status
	return s.ObservedGeneration >= ds.Generation && s.DesiredNumberScheduled > 0 &&
		s.NumberReady == s.DesiredNumberScheduled && s.UpdatedNumberScheduled == s.DesiredNumberScheduled
}
