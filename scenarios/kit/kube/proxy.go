package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/svclab/svclab/scenarios/kit"
)

// proxyLabel selects the proxy pods, kube-proxy's or svclab's.
const proxyLabel = "k8s-app=kube-proxy"

func (t *Target) proxyPods(ctx context.Context) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := t.res.WithNamespace("kube-system").List(ctx, &pods, resources.WithLabelSelector(proxyLabel)); err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// switchProxyMode edits mode in kube-system/kube-proxy's config.conf,
// deletes the pods labelled k8s-app=kube-proxy, and waits until the
// DaemonSet has replaced every one with a ready pod.
func (t *Target) switchProxyMode(ctx context.Context, mode string) error {
	var cm corev1.ConfigMap
	if err := t.res.Get(ctx, "kube-proxy", "kube-system", &cm); err != nil {
		return fmt.Errorf("ConfigMap kube-system/kube-proxy: %w", err)
	}
	conf, err := kit.SetMode(cm.Data["config.conf"], mode)
	if err != nil {
		return err
	}
	cm.Data["config.conf"] = conf
	if err := t.res.Update(ctx, &cm); err != nil {
		return fmt.Errorf("updating ConfigMap kube-system/kube-proxy: %w", err)
	}
	old, err := t.proxyPods(ctx)
	if err != nil {
		return err
	}
	gone := map[string]bool{}
	for i := range old {
		gone[string(old[i].UID)] = true
		if err := t.res.Delete(ctx, &old[i]); err != nil {
			return fmt.Errorf("deleting %s: %w", old[i].Name, err)
		}
	}
	return t.poll(ctx, "new ready proxy pods", func() (bool, error) {
		pods, err := t.proxyPods(ctx)
		if err != nil {
			return false, err
		}
		if len(pods) < len(old) {
			return false, fmt.Errorf("%d of %d proxy pods", len(pods), len(old))
		}
		for i := range pods {
			if gone[string(pods[i].UID)] || !podReady(&pods[i]) {
				return false, fmt.Errorf("proxy pod %s not replaced and ready yet", pods[i].Name)
			}
		}
		return true, nil
	})
}
