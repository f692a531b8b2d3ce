package e2eprovider

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/svclab/svclab/internal/netnsdial"
)

// RestConfig reads a kubeconfig file (its current context) and returns a
// rest.Config whose connections are dialled from the network namespace
// netns, the Cluster.Namespace of a kind cluster: with svclab's dockerd,
// kind's kubeconfig points at 127.0.0.1:PORT inside that namespace, which
// this process reaches this way without leaving its own namespace. With
// netns "" the rest.Config is the kubeconfig's, unchanged.
func RestConfig(kubeconfig, netns string) (*rest.Config, error) {
	if kubeconfig == "" {
		// clientcmd would fall back to the in-cluster config.
		return nil, errors.New("no kubeconfig file")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	return netnsdial.Config(cfg, netns), nil
}
