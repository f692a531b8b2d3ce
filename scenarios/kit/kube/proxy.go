package kube

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// proxyLabel selects kubeadm's kube-proxy pods (and svclab's proxy's):
// the proxy's pods when discovery found no DaemonSet to take the
// selector from.
const proxyLabel = "k8s-app=kube-proxy"

// proxyPods are the proxy's pods: those of the DaemonSet discovery found
// (proxyDaemonSet), else kube-system's pods labelled proxyLabel.
func (t *Target) proxyPods(ctx context.Context) ([]corev1.Pod, error) {
	ns, selector := "kube-system", proxyLabel
	ds, err := t.proxyDaemonSet(ctx)
	if err != nil {
		return nil, err
	}
	if ds != nil {
		sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
		if err != nil {
			return nil, fmt.Errorf("DaemonSet %s/%s: %w", ds.Namespace, ds.Name, err)
		}
		ns, selector = ds.Namespace, sel.String()
	}
	pods, err := t.clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// switchProxyMode sets mode in the proxy's ConfigMap's config.conf
// (kube-system/kube-proxy unless Options.ProxyConfig), restarts the proxy
// pods, and waits until the DaemonSet has replaced every one with a
// ready pod. Before its first change the run saves the ConfigMap in the
// cluster (saveProxyConfig): the target's Close, which the suite
// registers before any spec runs, puts it back, and so does the next
// run's sweep after a killed run. Switching back to the saved mode writes
// the saved data itself, so the ConfigMap ends exactly as it was.
func (t *Target) switchProxyMode(ctx context.Context, mode string) error {
	cms := t.clientset.CoreV1().ConfigMaps(t.proxyNS)
	cm, err := cms.Get(ctx, t.proxyName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("ConfigMap %s/%s: %w", t.proxyNS, t.proxyName, err)
	}
	if err := t.saveProxyConfig(ctx, cm); err != nil {
		return err
	}
	data := maps.Clone(t.saved.Data)
	if mode != t.saved.Mode {
		data = maps.Clone(cm.Data)
		if data["config.conf"], err = kit.SetMode(cm.Data["config.conf"], mode); err != nil {
			return err
		}
	}
	cm.Data = data
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating ConfigMap %s/%s: %w", t.proxyNS, t.proxyName, err)
	}
	return t.restartProxyPods(ctx)
}

// restartProxyPods deletes the proxy's pods and waits until its
// DaemonSet has replaced every one with a ready pod.
func (t *Target) restartProxyPods(ctx context.Context) error {
	old, err := t.proxyPods(ctx)
	if err != nil {
		return err
	}
	gone := map[string]bool{}
	for i := range old {
		gone[string(old[i].UID)] = true
		if err := t.clientset.CoreV1().Pods(old[i].Namespace).Delete(ctx, old[i].Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting %s/%s: %w", old[i].Namespace, old[i].Name, err)
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
