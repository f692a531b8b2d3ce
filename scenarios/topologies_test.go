package scenarios

// singleNode is the one-node lab of the foundation scenarios: a node, a
// client outside the cluster on its own LAN behind the lab's edge router.
const singleNode = `
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: "{{NAME}}"}
spec:
  cni: flannel-vxlan
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  proxy: {mode: iptables}
  nodes:
  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}
  clients:
  - {name: client, ip: 192.168.55.230/24}
`

// webService is a Deployment of `replicas` netexec pods and a ClusterIP
// Service "web" (port 80 → 8080) over them, plus a pod "probe" without
// ports from which pod-to-Service traffic is sent.
func webService(replicas int) string {
	return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: ` + itoa(replicas) + `
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: netexec, image: svclab/netexec:dev, ports: [{containerPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: probe, labels: {app: probe}}
spec:
  containers: [{name: client, image: svclab/netexec:dev}]
`
}
