package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// savedProxyConfig is the proxy's ConfigMap as it was before a
// --disruptive run first changed it, kept in the cluster (the ConfigMap
// SavedProxyConfigName beside it) so that the run's end, or after a
// killed run the next run's sweep or `svclab conformance cleanup`, puts
// it back.
type savedProxyConfig struct {
	// Namespace and Name are the proxy's ConfigMap; ResourceVersion the
	// version that was saved.
	Namespace, Name, ResourceVersion string
	// Mode is the proxy mode the saved configuration runs (kube-proxy's
	// default, iptables, when it names none).
	Mode string
	// Data is the ConfigMap's data as it was.
	Data map[string]string
	// Run is the run that saved it.
	Run string
}

// The keys of the saved copy's data.
const (
	savedKeyConfigMap       = "configmap"
	savedKeyResourceVersion = "resourceVersion"
	savedKeyMode            = "mode"
	savedKeyData            = "data.json"
)

// effectiveMode is the mode a KubeProxyConfiguration's config.conf runs:
// its mode field, or kube-proxy's default on Linux.
func effectiveMode(conf string) string {
	var c struct {
		Mode string `json:"mode"`
	}
	if yaml.Unmarshal([]byte(conf), &c) != nil || c.Mode == "" {
		return "iptables"
	}
	return c.Mode
}

// saveProxyConfig keeps cm as it is now in the cluster, once per run,
// before the run's first change to it. A copy another run saved and did
// not restore is an error: that run still runs, or was killed and its
// change must be put back first (the next run's sweep, or `svclab
// conformance cleanup`, does).
func (t *Target) saveProxyConfig(ctx context.Context, cm *corev1.ConfigMap) error {
	if t.saved != nil {
		return nil
	}
	s := &savedProxyConfig{Namespace: cm.Namespace, Name: cm.Name, ResourceVersion: cm.ResourceVersion,
		Mode: effectiveMode(cm.Data["config.conf"]), Data: maps.Clone(cm.Data), Run: t.runID}
	data, err := json.Marshal(s.Data)
	if err != nil {
		return err
	}
	copyCM := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: SavedProxyConfigName, Namespace: cm.Namespace, Labels: runLabels(t.runID)},
		Data: map[string]string{
			savedKeyConfigMap: cm.Namespace + "/" + cm.Name, savedKeyResourceVersion: cm.ResourceVersion,
			savedKeyMode: s.Mode, savedKeyData: string(data),
		},
	}
	_, err = t.clientset.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, copyCM, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		existing, gerr := t.clientset.CoreV1().ConfigMaps(cm.Namespace).Get(ctx, SavedProxyConfigName, metav1.GetOptions{})
		if gerr != nil {
			return fmt.Errorf("saving %s/%s before changing it: %w", cm.Namespace, cm.Name, gerr)
		}
		if existing.Labels[RunLabel] == t.runID { // this run saved it already
			t.saved, err = readSavedProxyConfig(existing)
			return err
		}
		return fmt.Errorf("saving %s/%s before changing it: %s/%s holds a copy run %s saved and has not put back: that run still runs, or was killed (`svclab conformance cleanup` puts it back)",
			cm.Namespace, cm.Name, cm.Namespace, SavedProxyConfigName, existing.Labels[RunLabel])
	}
	if err != nil {
		return fmt.Errorf("saving %s/%s before changing it: %w", cm.Namespace, cm.Name, err)
	}
	t.saved = s
	fmt.Fprintf(t.opts.Out, "saved %s/%s (mode %s) in %s/%s before changing it\n", cm.Namespace, cm.Name, s.Mode, cm.Namespace, SavedProxyConfigName)
	return nil
}

// readSavedProxyConfig reads a saved copy.
func readSavedProxyConfig(cm *corev1.ConfigMap) (*savedProxyConfig, error) {
	ns, name, err := ParseProxyConfig(cm.Data[savedKeyConfigMap])
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", cm.Namespace, cm.Name, err)
	}
	s := &savedProxyConfig{Namespace: ns, Name: name, ResourceVersion: cm.Data[savedKeyResourceVersion],
		Mode: cm.Data[savedKeyMode], Run: cm.Labels[RunLabel]}
	if err := json.Unmarshal([]byte(cm.Data[savedKeyData]), &s.Data); err != nil {
		return nil, fmt.Errorf("%s/%s: %s: %w", cm.Namespace, cm.Name, savedKeyData, err)
	}
	return s, nil
}

// restoreProxyConfig puts a saved configuration back: its data into the
// proxy's ConfigMap, then the proxy's pods restarted and ready again when
// they may run another configuration — the data had to be written, or a
// pod is older than the ConfigMap's last write (a restore interrupted
// between the write and the restart) —, then the saved copy deleted.
func (t *Target) restoreProxyConfig(ctx context.Context, s *savedProxyConfig) error {
	cms := t.clientset.CoreV1().ConfigMaps(s.Namespace)
	current, err := cms.Get(ctx, s.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("restoring %s/%s: %w", s.Namespace, s.Name, err)
	}
	restart := !maps.Equal(current.Data, s.Data)
	if restart {
		current.Data = maps.Clone(s.Data)
		if _, err := cms.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("restoring %s/%s: %w", s.Namespace, s.Name, err)
		}
	} else if restart, err = t.proxyOlderThan(ctx, lastWrite(current)); err != nil {
		return fmt.Errorf("restoring %s/%s: %w", s.Namespace, s.Name, err)
	}
	if restart {
		if err := t.restartProxyPods(ctx); err != nil {
			return fmt.Errorf("restoring %s/%s: %w", s.Namespace, s.Name, err)
		}
		fmt.Fprintf(t.opts.Out, "restored %s/%s (mode %s) as run %s saved it, and restarted the proxy's pods\n", s.Namespace, s.Name, s.Mode, s.Run)
	}
	if err := cms.Delete(ctx, SavedProxyConfigName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the saved copy %s/%s: %w", s.Namespace, SavedProxyConfigName, err)
	}
	return nil
}

// lastWrite is when an object was last written, as its managed fields
// say (zero when it has none).
func lastWrite(obj metav1.Object) time.Time {
	var last time.Time
	for _, m := range obj.GetManagedFields() {
		if m.Time != nil && m.Time.After(last) {
			last = m.Time.Time
		}
	}
	return last
}

// proxyOlderThan says whether a proxy pod was created before t (false
// for a zero t).
func (t *Target) proxyOlderThan(ctx context.Context, when time.Time) (bool, error) {
	if when.IsZero() {
		return false, nil
	}
	pods, err := t.proxyPods(ctx)
	if err != nil {
		return false, err
	}
	for _, p := range pods {
		if p.CreationTimestamp.Time.Before(when) {
			return true, nil
		}
	}
	return false, nil
}
