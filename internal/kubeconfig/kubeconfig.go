package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/svclab/svclab/internal/netnsdial"
)

// ReachTimeout bounds Reach's one request: a cluster that does not answer
// within it is reported as not answering, within 10 seconds of the start
// whatever the network does (a dropped SYN, a server that accepts and
// never speaks).
const ReachTimeout = 8 * time.Second

// InClusterSource is the source of InCluster's config, for messages.
const InClusterSource = "in-cluster config (the pod's service account)"

// Load reads the kubeconfig file path and returns the rest.Config of its
// context kubeContext ("" is its current context), whose connections are
// dialled from the network namespace netns ("" is this process's). An
// empty path is an error: clientcmd would fall back to the in-cluster
// config, which only InCluster gives.
func Load(path, kubeContext, netns string) (*rest.Config, error) {
	if path == "" {
		return nil, errors.New("no kubeconfig file")
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return netnsdial.Config(cfg, netns), nil
}

// InCluster is the config of the cluster this process runs in, as a pod
// (a Job's): the API server from $KUBERNETES_SERVICE_HOST and _PORT, the
// pod's service-account token and CA (rest.InClusterConfig).
func InCluster() (*rest.Config, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("%s: %w (in-cluster runs in a pod with a service account, as the Job of `svclab conformance manifest`)", InClusterSource, err)
	}
	return cfg, nil
}

// Reach lists the cluster's nodes once: one line naming where the config
// came from (source: the kubeconfig file, or InClusterSource) and the API
// server when the server does not answer within ReachTimeout, refuses the
// credentials, or forbids the list, or when the cluster has no nodes. It
// creates nothing.
func Reach(ctx context.Context, cfg *rest.Config, source string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", describe(source), err)
	}
	ctx, cancel := context.WithTimeout(ctx, ReachTimeout)
	defer cancel()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: the API server %s refuses the credentials: %s", describe(source), cfg.Host, oneLine(err))
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: the API server %s answers, but: %s (`svclab conformance rbac` prints the RBAC the suite needs)", describe(source), cfg.Host, oneLine(err))
	case err != nil:
		return fmt.Errorf("%s: the API server %s does not answer: %s", describe(source), cfg.Host, oneLine(err))
	case len(nodes.Items) == 0:
		return fmt.Errorf("%s: the cluster at %s has no nodes", describe(source), cfg.Host)
	}
	return nil
}

// describe is "kubeconfig FILE", or the in-cluster config.
func describe(source string) string {
	if source == InClusterSource {
		return source
	}
	return "kubeconfig " + source
}

// oneLine is an error's text on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
