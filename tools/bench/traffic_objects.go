package bench

import "fmt"

// The traffic benchmark's objects: one server pod, one client pod, and
// one ClusterIP Service whose only endpoint is that server, so that the
// cluster IP and the pod IP lead to the same process and differ only by
// the Service's path through the node.
const (
	trafficServerApp = "traffic-server"
	trafficClientApp = "traffic-client"
	trafficService   = "traffic"
)

// trafficObjectsYAML are the server and client Deployments and the
// Service, cluster IP serviceIP(0), port servicePort to the server's
// serverPort.
func trafficObjectsYAML() string {
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
---
apiVersion: v1
kind: Service
metadata:
  name: %[4]s
spec:
  clusterIP: %[5]s
  selector: {app: %[1]s}
  ports:
  - name: http
    port: %[6]d
    targetPort: %[3]d
`, trafficServerApp, trafficClientApp, serverPort, trafficService, serviceIP(0), servicePort)
}
