package bench

import "fmt"

// The traffic benchmark's pods: one server, labelled as the data-plane
// benchmark's servers so that the generated Services (servicesYAML)
// select it, and one client. Every Service's only endpoint is that
// server, so that the cluster IP and the pod IP lead to the same process
// and differ only by the Service's path through the node.
const (
	trafficServerApp = serverApp
	trafficClientApp = "traffic-client"
)

// trafficPodsYAML are the server and client Deployments.
func trafficPodsYAML() string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: server
        image: svclab/netexec:dev
        ports:
        - containerPort: %[3]d
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[2]s}
  template:
    metadata:
      labels: {app: %[2]s}
    spec:
      containers:
      - name: client
        image: svclab/netexec:dev
        ports:
        - containerPort: 8081
`, trafficServerApp, trafficClientApp, serverPort)
}
