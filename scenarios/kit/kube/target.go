package kube

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/svclab/svclab/internal/kubeconfig"
	"github.com/svclab/svclab/scenarios/kit"
)

// Options configure a Target.
type Options struct {
	// Source names where the rest.Config came from (the kubeconfig file),
	// for error messages.
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
	cfg       *rest.Config
	clientset *kubernetes.Clientset
	client    klient.Client
	res       *resources.Resources
	opts      Options
	agentNS   string
}

// New checks that the cluster answers (a clear error naming the
// kubeconfig and server when it does not, with nothing created), then
// starts the node agent on every node.
func New(ctx context.Context, cfg *rest.Config, opts Options) (*Target, error) {
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 3 * time.Minute
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	c, err := klient.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Source, err)
	}
	cs, err := newClientset(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Source, err)
	}
	if err := kubeconfig.Reach(ctx, cfg, opts.Source); err != nil {
		return nil, err
	}
	t := &Target{cfg: cfg, clientset: cs, client: c, res: c.Resources(), opts: opts}
	ns, err := t.createNamespace(ctx, "svclab-agent")
	if err != nil {
		return nil, err
	}
	t.agentNS = ns
	fmt.Fprintf(opts.Out, "node agent: DaemonSet %s/%s (%s)\n", ns, agentName, opts.Image)
	if err := t.startAgent(ctx); err != nil {
		t.Close(context.Background())
		return nil, err
	}
	return t, nil
}

func (t *Target) Backend() string { return "kubernetes" }

// Close deletes the node agent's namespace.
func (t *Target) Close(ctx context.Context) error {
	if t.agentNS == "" {
		return nil
	}
	return t.deleteNamespace(ctx, t.agentNS)
}

// Workspace is a namespace of its own, privileged (the scenarios' pods
// are ordinary, but some clusters enforce Pod Security on every
// namespace).
func (t *Target) Workspace(ctx context.Context, prefix string, nodes int) (kit.Workspace, error) {
	all, err := t.nodes(ctx)
	if err != nil {
		return nil, err
	}
	if len(all) < nodes {
		return nil, kit.ErrTooFewNodes
	}
	ns, err := t.createNamespace(ctx, "svclab-"+prefix)
	if err != nil {
		return nil, err
	}
	return &workspace{t: t, ns: ns}, nil
}

func (t *Target) createNamespace(ctx context.Context, prefix string) (string, error) {
	name := prefix + "-" + suffix()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"app.kubernetes.io/managed-by":       "svclab-conformance",
		"pod-security.kubernetes.io/enforce": "privileged",
		"pod-security.kubernetes.io/warn":    "privileged",
		"pod-security.kubernetes.io/audit":   "privileged",
	}}}
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

// nodes are the cluster's nodes by name.
func (t *Target) nodes(ctx context.Context) ([]kit.Node, error) {
	var list corev1.NodeList
	if err := t.res.List(ctx, &list); err != nil {
		return nil, err
	}
	var out []kit.Node
	for _, n := range list.Items {
		node := kit.Node{Name: n.Name}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && !strings.Contains(a.Address, ":") {
				node.IP = mustAddr(a.Address)
			}
		}
		out = append(out, node)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// poll calls done every half second until it says true, errors for good
// (ctx) or ReadyTimeout passes; the last error goes into the message.
func (t *Target) poll(ctx context.Context, what string, done func() (bool, error)) error {
	deadline := time.Now().Add(t.opts.ReadyTimeout)
	var last error
	for {
		ok, err := done()
		if ok {
			return nil
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

// apply creates the objects of manifests in namespace ns.
func (t *Target) apply(ctx context.Context, ns, manifests string) error {
	return decoder.DecodeEach(ctx, strings.NewReader(manifests), decoder.CreateHandler(t.res), decoder.MutateNamespace(ns))
}

// daemonSetReady says whether a DaemonSet runs a ready, current pod on
// every node it should.
func daemonSetReady(ds *appsv1.DaemonSet) bool {
	s := ds.Status
	return s.ObservedGeneration >= ds.Generation && s.DesiredNumberScheduled > 0 &&
		s.NumberReady == s.DesiredNumberScheduled && s.UpdatedNumberScheduled == s.DesiredNumberScheduled
}

func suffix() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}
