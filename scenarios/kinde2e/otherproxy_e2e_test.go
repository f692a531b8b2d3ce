package kinde2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/kind"
)

// otherProxyManifest runs svclab's proxy as a Service proxy of its own, the
// way a cluster runs one that is not kube-proxy: another namespace, name
// and labels, its configuration in a file from a ConfigMap of its own —
// no k8s-app=kube-proxy, no kubeadm ConfigMap. {{NAME}} is the cluster's.
const otherProxyManifest = `apiVersion: v1
kind: Namespace
metadata: {name: dataplane}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: service-proxy, namespace: dataplane}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: dataplane-service-proxy}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node-proxier"}
subjects: [{kind: ServiceAccount, name: service-proxy, namespace: dataplane}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: service-proxy-settings, namespace: dataplane}
data:
  proxy.yaml: |
    apiVersion: kubeproxy.config.k8s.io/v1alpha1
    kind: KubeProxyConfiguration
    mode: iptables
    clusterCIDR: 10.244.0.0/16
    conntrack: {maxPerCore: 0}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: service-proxy, namespace: dataplane, labels: {app: service-proxy}}
spec:
  selector: {matchLabels: {app: service-proxy}}
  template:
    metadata: {labels: {app: service-proxy}}
    spec:
      serviceAccountName: service-proxy
      hostNetwork: true
      priorityClassName: system-node-critical
      tolerations: [{operator: Exists}]
      containers:
      - name: proxy
        image: {{IMAGE}}
        imagePullPolicy: Never
        args: [proxy, --hostname-override=$(NODE_NAME), --config=/etc/service-proxy/proxy.yaml]
        env:
        - name: NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
        - {name: KUBERNETES_SERVICE_HOST, value: "{{NAME}}-control-plane"}
        - {name: KUBERNETES_SERVICE_PORT, value: "6443"}
        securityContext: {privileged: true}
        volumeMounts:
        - {name: settings, mountPath: /etc/service-proxy}
        - {name: xtables-lock, mountPath: /run/xtables.lock}
      volumes:
      - name: settings
        configMap: {name: service-proxy-settings}
      - name: xtables-lock
        hostPath: {path: /run/xtables.lock, type: FileOrCreate}
`

// e2eOtherProxy is the proof (d): a cluster without kube-proxy
// whose Services svclab's proxy serves under another name, without
// kubeadm's ConfigMap. Behaviour specs pass; the kube-proxy-internal specs
// and the mode switch skip, each with its reason in the JUnit.
func e2eOtherProxy(t *testing.T, bin, artifacts string) {
	const name = "e2e-other-proxy"
	junit := filepath.Join(artifacts, "junit-kind-other-proxy.xml")
	start := time.Now()
	run(t, bin, "create", "cluster", "--config", filepath.Join("..", "..", "clusters", "kind", "svclab-proxy.yaml"), "--name", name, "--proxy", kind.ProxySvclab)
	defer run(t, bin, "delete", "cluster", "--name", name)
	f := foreignCluster{t: t, bin: bin, c: clusterOf(t, name), kubeconfig: kubeconfigOf(t, name)}

	// Swap the proxy: the new one first, then kube-proxy's stand-in and
	// kubeadm's ConfigMap go (both write the same rules meanwhile).
	manifest := strings.NewReplacer("{{IMAGE}}", kind.ProxyImage, "{{NAME}}", name).Replace(otherProxyManifest)
	f.mustKubectl(manifest, "apply", "-f", "-")
	f.mustKubectl("", "-n", "dataplane", "rollout", "status", "daemonset/service-proxy", "--timeout=3m")
	f.mustKubectl("", "-n", "kube-system", "delete", "daemonset/svclab-proxy", "configmap/kube-proxy", "--wait")

	out, err := runErr(bin, f.conformance("--pull-policy", "Never", "--junit", junit, "--disruptive", "--tolerate-all", "-o", "table")...)
	t.Logf("MEASURE svclab's proxy as another proxy: create + conformance: %s; report %s\n%s", time.Since(start).Round(time.Second), junit, lastLines(out, 60))
	if err != nil {
		t.Fatalf("svclab conformance on %s: %v\n%s", name, err, lastLines(out, 80))
	}
	report, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	// (XML escapes the apostrophes of the reasons.)
	for _, want := range []string{"not in kube-proxy", "kube-proxy&#39;s rules are not checked", "mode-switch"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("%s does not mention %q (the skips' reasons)", junit, want)
		}
	}
}
