package bench

import "fmt"

// The Service `svclab bench apply` changes: selector-less, its one
// hand-written EndpointSlice applied again and again with another address.
const (
	changedService = "bench-changed"
	changedSlice   = "bench-changed-1"
)

// changedServiceYAML is the selector-less Service whose EndpointSlice the
// apply benchmark changes.
func changedServiceYAML() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %s
spec:
  ports:
  - name: http
    port: %d
    targetPort: %d
`, changedService, servicePort, serverPort)
}

// changedSliceYAML is the hand-written EndpointSlice of changedService in
// its i-th version: one endpoint, whose address moves with i.
func changedSliceYAML(i int) string {
	return fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %s
  labels:
    kubernetes.io/service-name: %s
addressType: IPv4
endpoints:
- addresses: ["10.244.1.%d"]
  conditions: {ready: true}
ports:
- name: http
  port: %d
  protocol: TCP
`, changedSlice, changedService, 100+i%100, serverPort)
}
