package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/svclab/svclab/internal/netnsdial"
)

// ReachTimeout bounds Reach's one request: a cluster that does not answer
// within it is reported as not answering.
const ReachTimeout = 15 * time.Second

// Load reads the kubeconfig file path and returns the rest.Config of its
// context kubeContext ("" is its current context), whose connections are
// dialled from the network namespace netns ("" is this process's). An
// empty path is an error: clientcmd would fall back to the in-cluster
// config.
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

// Reach lists the cluster's nodes once: an error naming the kubeconfig
// file (source) and the API server when the server does not answer
// within ReachTimeout, or when the cluster has no nodes. It creates
// nothing.
func Reach(ctx context.Context, cfg *rest.Config, source string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", source, err)
	}
	ctx, cancel := context.WithTimeout(ctx, ReachTimeout)
	defer cancel()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("kubeconfig %s: the API server %s does not answer: %v", source, cfg.Host, err)
	}
	if len(nodes.Items) == 0 {
		return fmt.Errorf("kubeconfig %s: the cluster at %s has no nodes", source, cfg.Host)
	}
	return nil
}
