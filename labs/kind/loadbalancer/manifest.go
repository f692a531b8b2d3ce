package loadbalancer

import (
	"bytes"
	"encoding/json"
	"text/template"

	"github.com/svclab/svclab/labs/agents/selfexec"
)

// ManifestParams fill Manifest.
type ManifestParams struct {
	Image string // svclab/svclab:dev
	Pool  string // the pool, as --pool takes it
	// APIServerHost/Port reach the API server without a Service VIP (as
	// the CNI agent does): the control-plane node's name and 6443.
	APIServerHost, APIServerPort string
}

// Args is the container's args, as a YAML flow sequence.
func (p ManifestParams) Args() string {
	data, _ := json.Marshal(selfexec.Args(&selfexec.LoadBalancer{Pool: p.Pool})) // strings always marshal
	return string(data)
}

// Manifest is the svclab-loadbalancer Deployment in kube-system with its
// RBAC: read Services, write their status.
func Manifest(p ManifestParams) (string, error) {
	var b bytes.Buffer
	if err := manifest.Execute(&b, p); err != nil {
		return "", err
	}
	return b.String(), nil
}

var manifest = template.Must(template.New("loadbalancer").Parse(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: svclab-loadbalancer
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: svclab-loadbalancer
rules:
- apiGroups: [""]
  resources: [services]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [services/status]
  verbs: [update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: svclab-loadbalancer
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: svclab-loadbalancer
subjects:
- kind: ServiceAccount
  name: svclab-loadbalancer
  namespace: kube-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svclab-loadbalancer
  namespace: kube-system
  labels: {app: svclab-loadbalancer}
spec:
  replicas: 1
  # one allocator at a time: the old pod stops before a new one starts
  strategy: {type: Recreate}
  selector:
    matchLabels: {app: svclab-loadbalancer}
  template:
    metadata:
      labels: {app: svclab-loadbalancer}
    spec:
      serviceAccountName: svclab-loadbalancer
      # the node's resolver finds the control-plane node by name
      hostNetwork: true
      priorityClassName: system-cluster-critical
      tolerations:
      - {key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}
      containers:
      - name: loadbalancer
        image: {{.Image}}
        imagePullPolicy: Never
        args: {{.Args}}
        env:
        - name: KUBERNETES_SERVICE_HOST
          value: "{{.APIServerHost}}"
        - name: KUBERNETES_SERVICE_PORT
          value: "{{.APIServerPort}}"
`))
