package access

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// The labels every object of the suite carries, and the names of the
// objects a later run or `svclab conformance cleanup` looks for.
const (
	// ManagedByLabel and ManagedBy mark every object the suite makes:
	// what the sweep and `svclab conformance cleanup` delete.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "svclab-conformance"
	// RunLabel holds the run id: which run made the object.
	RunLabel = "svclab.dev/conformance-run"
	// ComponentLabel says what a namespace is for (ComponentAgent or
	// ComponentWorkspace).
	ComponentLabel     = "app.kubernetes.io/component"
	ComponentAgent     = "node-agent"
	ComponentWorkspace = "workspace"
	// NameLabel names the node agent's DaemonSet and pods.
	NameLabel = "app.kubernetes.io/name"

	// SavedProxyConfigName is the ConfigMap, beside the proxy's own, that
	// holds the proxy's configuration as it was before a --disruptive run
	// changed it (restored at the run's end, or by the next run's sweep).
	SavedProxyConfigName = "svclab-conformance-saved-proxy-config"
	// RunLeaseName is the Lease in a run's node agent namespace that the
	// run renews while it lives: how a later run tells a killed run's
	// objects from a running one's.
	RunLeaseName = "svclab-conformance-run"
	// DefaultProxyConfig is kubeadm's kube-proxy ConfigMap.
	DefaultProxyConfig = "kube-system/kube-proxy"
)

// ParseNodeSelector reads a node selector flag, "k=v,k2=v2" ("" is nil:
// every node).
func ParseNodeSelector(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	m, err := labels.ConvertSelectorToLabelsMap(s)
	if err != nil {
		return nil, fmt.Errorf("node selector %q: %w (want k=v,k2=v2)", s, err)
	}
	return m, nil
}

// ParseProxyConfig reads "NAMESPACE/NAME", the proxy's ConfigMap (""
// is DefaultProxyConfig).
func ParseProxyConfig(s string) (namespace, name string, err error) {
	if s == "" {
		s = DefaultProxyConfig
	}
	namespace, name, ok := strings.Cut(s, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("proxy config %q: want NAMESPACE/NAME, e.g. %s", s, DefaultProxyConfig)
	}
	return namespace, name, nil
}
