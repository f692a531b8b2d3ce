package kit

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// SetMode returns the KubeProxyConfiguration text conf with its mode set
// to mode, every other field kept.
func SetMode(conf, mode string) (string, error) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(conf), &m); err != nil {
		return "", fmt.Errorf("config.conf of kube-system/kube-proxy: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	m["mode"] = mode
	out, err := yaml.Marshal(m)
	return string(out), err
}

// ProxyConfigMapWithMode is the kube-proxy ConfigMap cm, its config.conf
// set to mode, as a manifest.
func ProxyConfigMapWithMode(cm *corev1.ConfigMap, mode string) (string, error) {
	conf, err := SetMode(cm.Data["config.conf"], mode)
	if err != nil {
		return "", err
	}
	out := cm.DeepCopy()
	out.TypeMeta.APIVersion, out.TypeMeta.Kind = "v1", "ConfigMap"
	out.Data["config.conf"] = conf
	b, err := yaml.Marshal(out)
	return string(b), err
}

// WaitProxyMode waits until every node's /proxyMode says mode.
func WaitProxyMode(ctx context.Context, w Workspace, nodes []string, mode string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, n := range nodes {
		for {
			got, err := w.ProxyMode(ctx, n)
			if err == nil && got == mode {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: /proxyMode says %q (%v), want %q after %s", n, got, err, mode, timeout)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	return nil
}
