package e2eprovider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/e2e-framework/klient"
)

// controlPlaneComponents are the static pods (label component) a kind
// control plane runs.
var controlPlaneComponents = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// WaitForControlPlane waits until the control plane's pods (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler) exist and every
// pod in kube-system is Ready (or has completed), within ctx's deadline,
// else the ready timeout (default 3 minutes). When client cannot reach
// the cluster (the cluster is in a network namespace and client's
// rest.Config has no dialer of its own, as envconf.Config's default
// client from the kubeconfig file), it uses Client instead.
func (p *Provider) WaitForControlPlane(ctx context.Context, client klient.Client) error {
	if client == nil || (p.Namespace() != "" && (client.RESTConfig() == nil || client.RESTConfig().Dial == nil)) {
		c, err := p.Client()
		if err != nil {
			return err
		}
		client = c
	}
	if _, ok := ctx.Deadline(); !ok {
		timeout := p.readyTimeout
		if timeout == 0 {
			timeout = DefaultReadyTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		var pods corev1.PodList
		var waiting string
		if err := client.Resources("kube-system").List(ctx, &pods); err != nil {
			waiting = err.Error()
		} else {
			waiting = notReady(pods.Items)
		}
		if waiting == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the control plane of %s: %w (still waiting for %s)", p.name, ctx.Err(), waiting)
		case <-tick.C:
		}
	}
}

// notReady says what is missing for the kube-system pods to be ready, ""
// when nothing is.
func notReady(pods []corev1.Pod) string {
	var missing []string
	for _, c := range controlPlaneComponents {
		if !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Labels["component"] == c }) {
			missing = append(missing, c)
		}
	}
	for _, pod := range pods {
		if !podReady(pod) {
			missing = append(missing, "pod "+pod.Name)
		}
	}
	return strings.Join(missing, ", ")
}

func podReady(pod corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded {
		return true
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
