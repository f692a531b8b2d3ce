package cni

import (
	"bytes"
	"encoding/json"
	"text/template"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/proxy"
)

// ManifestParams fill the DaemonSet manifests.
type ManifestParams struct {
	Variant    string
	Image      string // the CNI agent's: svclab/svclab:dev
	ProxyImage string // the proxy's: svclab/svclab-proxy:dev (with iptables)
	// APIServerHost/Port reach the API server without a Service VIP (the
	// CNI agent and a replacing proxy run before any proxy is there): the
	// control-plane node's name, resolved by Docker's DNS, and 6443.
	APIServerHost string
	APIServerPort string
	ClusterCIDR   string // for the svclab proxy's KubeProxyConfiguration
}

// Manifest is the svclab-cni DaemonSet with its RBAC (read Nodes).
func Manifest(p ManifestParams) (string, error) { return render(cniManifest, p) }

// ProxyManifest is svclab's proxy as a DaemonSet replacing kube-proxy
// (kubeProxyMode: none), with the kube-system/kube-proxy ConfigMap it reads
// as kube-proxy would.
func ProxyManifest(p ManifestParams) (string, error) { return render(proxyManifest, p) }

// AgentArgs is the CNI agent container's args, as a YAML flow sequence.
func (p ManifestParams) AgentArgs() string {
	return flowSequence(selfexec.Args(&selfexec.CNIAgent{Variant: p.Variant, ClusterCIDR: p.ClusterCIDR}))
}

// ProxyArgs is the proxy container's args, as a YAML flow sequence: the
// node's name comes from the pod's NODE_NAME variable.
func (ManifestParams) ProxyArgs() string {
	return flowSequence(selfexec.Args(&selfexec.Proxy{Options: proxy.Options{NodeName: "$(NODE_NAME)"}}))
}

// flowSequence writes args as a YAML flow sequence (JSON is YAML).
func flowSequence(args []string) string {
	data, _ := json.Marshal(args) // strings always marshal
	return string(data)
}

func render(t *template.Template, p ManifestParams) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, p); err != nil {
		return "", err
	}
	return b.String(), nil
}

var cniManifest = template.Must(template.New("cni").Parse(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: svclab-cni
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: svclab-cni
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: svclab-cni
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: svclab-cni
subjects:
- kind: ServiceAccount
  name: svclab-cni
  namespace: kube-system
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: svclab-cni
  namespace: kube-system
  labels: {app: svclab-cni}
spec:
  selector:
    matchLabels: {app: svclab-cni}
  template:
    metadata:
      labels: {app: svclab-cni}
    spec:
      serviceAccountName: svclab-cni
      hostNetwork: true
      priorityClassName: system-node-critical
      tolerations:
      - operator: Exists
      containers:
      - name: agent
        image: {{.Image}}
        imagePullPolicy: Never
        args: {{.AgentArgs}}
        env:
        - name: NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
        - name: KUBERNETES_SERVICE_HOST
          value: "{{.APIServerHost}}"
        - name: KUBERNETES_SERVICE_PORT
          value: "{{.APIServerPort}}"
        securityContext: {privileged: true}
        volumeMounts:
        # the node's root: /etc/cni/net.d, /opt/cni/bin, and its iptables
        - {name: node-root, mountPath: /host}
      volumes:
      - name: node-root
        hostPath: {path: /}
`))

var proxyManifest = template.Must(template.New("proxy").Parse(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: kube-proxy
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: svclab-proxy
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:node-proxier
subjects:
- kind: ServiceAccount
  name: kube-proxy
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: svclab-proxy-config
  namespace: kube-system
rules:
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [kube-proxy]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: svclab-proxy-config
  namespace: kube-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: svclab-proxy-config
subjects:
- kind: ServiceAccount
  name: kube-proxy
  namespace: kube-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kube-proxy
  namespace: kube-system
data:
  config.conf: |
    apiVersion: kubeproxy.config.k8s.io/v1alpha1
    kind: KubeProxyConfiguration
    mode: iptables
    clusterCIDR: {{.ClusterCIDR}}
    # Not upstream's default (32768), as in the config kind gives its own
    # kube-proxy: skip setting the sysctl net.netfilter.nf_conntrack_max, a
    # global that affects the host and every other namespace. Everything
    # else is upstream's defaults: metrics on 127.0.0.1:10249, node ports
    # on localhost too (route_localnet=1 in the kind node's namespace).
    conntrack:
      maxPerCore: 0
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: svclab-proxy
  namespace: kube-system
  labels: {k8s-app: kube-proxy, app.kubernetes.io/name: svclab-proxy}
spec:
  # k8s-app=kube-proxy, as kube-proxy's own pods: what an operator deletes
  # to restart the proxy after editing the ConfigMap (seed 001).
  selector:
    matchLabels: {k8s-app: kube-proxy}
  template:
    metadata:
      labels: {k8s-app: kube-proxy, app.kubernetes.io/name: svclab-proxy}
    spec:
      serviceAccountName: kube-proxy
      hostNetwork: true
      priorityClassName: system-node-critical
      tolerations:
      - operator: Exists
      containers:
      - name: svclab-proxy
        image: {{.ProxyImage}}
        imagePullPolicy: Never
        args: {{.ProxyArgs}}
        env:
        - name: NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
        - name: KUBERNETES_SERVICE_HOST
          value: "{{.APIServerHost}}"
        - name: KUBERNETES_SERVICE_PORT
          value: "{{.APIServerPort}}"
        securityContext: {privileged: true}
        volumeMounts:
        - {name: xtables-lock, mountPath: /run/xtables.lock}
        - {name: lib-modules, mountPath: /lib/modules, readOnly: true}
      volumes:
      - name: xtables-lock
        hostPath: {path: /run/xtables.lock, type: FileOrCreate}
      - name: lib-modules
        hostPath: {path: /lib/modules}
`))
