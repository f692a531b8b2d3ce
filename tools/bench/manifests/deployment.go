// Package manifests writes the workloads svclab's benchmarks apply to
// their labs, so that every benchmark's pods are the same netexec pods
// written the same way.
package manifests

import "fmt"

// NetexecDeployment is a Deployment named app of replicas netexec pods
// labelled app=<app>, whose one container (named container) declares
// port; it ends with a newline, ready to join others with "---\n".
func NetexecDeployment(app, container string, replicas, port int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: %[3]d
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: %[2]s
        image: svclab/netexec:dev
        ports:
        - containerPort: %[4]d
`, app, container, replicas, port)
}
