package conformance

import (
	"fmt"
	"strings"
)

// tolerateAll lets the scenario pods run on control-plane nodes too (a
// kind cluster's first node is one).
const tolerateAll = `tolerations: [{operator: Exists}]`

// webService is a Deployment of `replicas` netexec pods labelled app=web
// and a ClusterIP Service "web" (port 80 → 8080) over them, plus a pod
// "probe" (app=probe) that pod-to-Service traffic is sent from.
func (s *suite) webService(replicas int) string { return s.webServiceWithPolicy(replicas, "") }

// webServiceWithPolicy is webService with policy, lines of the Service's
// spec on its IP families ("" is none: the cluster's default).
func (s *suite) webServiceWithPolicy(replicas int, policy string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      %s
      containers:
      - name: netexec
        image: %s
        imagePullPolicy: %s
        args: [netexec, --http-port=8080]
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /hostname, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
%s  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
%s`, replicas, tolerateAll, s.opts.ServerImage, s.opts.PullPolicy, policy, s.probePod("probe", ""))
}

// probePod is a netexec pod labelled app=probe to send traffic from; on
// the given node when node is not "".
func (s *suite) probePod(name, node string) string {
	pin := ""
	if node != "" {
		pin = "nodeName: " + node
	}
	return fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata: {name: %s, labels: {app: probe}}
spec:
  %s
  %s
  containers:
  - name: netexec
    image: %s
    imagePullPolicy: %s
    args: [netexec, --http-port=8080]
    readinessProbe: {httpGet: {path: /hostname, port: 8080}, periodSeconds: 1}
`, name, tolerateAll, pin, s.opts.Image, s.opts.PullPolicy)
}

// nodePortService is one netexec pod on node `node` behind a NodePort
// Service "echo" (port 80 → 8080, the node port allocated).
func (s *suite) nodePortService(node string) string {
	return strings.TrimSpace(fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo}
spec:
  replicas: 1
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      %s
      nodeName: %s
      containers:
      - name: netexec
        image: %s
        imagePullPolicy: %s
        args: [netexec, --http-port=8080]
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /hostname, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: echo}
spec:
  type: NodePort
  selector: {app: echo}
  ports: [{port: 80, targetPort: 8080}]
`, tolerateAll, node, s.opts.Image, s.opts.PullPolicy))
}
