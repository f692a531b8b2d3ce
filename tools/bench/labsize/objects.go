package labsize

import (
	"fmt"
	"strings"

	"github.com/svclab/svclab/tools/bench/manifests"
)

// The measured workload: one Deployment whose pods each listen on
// serverPort, and one Service selecting them.
const (
	serverApp   = "labsize-server"
	serviceName = "labsize"
	serverPort  = 8080
	// servicePort is the Service's port in the workload; the measured
	// change moves it to changedServicePort.
	servicePort        = 80
	changedServicePort = 81
)

// MaxNodes is the most nodes a measured lab may have: node i's podCIDR is
// 10.244.<i+1>.0/24 and its address 192.168.16.<i+10>/20.
const MaxNodes = 240

// MaxPodsPerNode is the most pods a node of a measured lab may run: a
// /24 podCIDR holds 253 pod addresses.
const MaxPodsPerNode = 250

// nodeName is the name of node i (0-based).
func nodeName(i int) string { return fmt.Sprintf("node%d", i+1) }

// labYAML is the lab file of a measured lab with n nodes.
func labYAML(name string, nodes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# svclab bench labs: %d nodes
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata:
  name: %s
spec:
  cni: flannel-vxlan
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  proxy:
    mode: iptables
    iptablesBackend: ""
  nodes:
`, nodes, name)
	for i := range nodes {
		fmt.Fprintf(&b, "  - {name: %s, ip: 192.168.16.%d/20, podCIDR: 10.244.%d.0/24}\n", nodeName(i), i+10, i+1)
	}
	return b.String()
}

// workloadYAML is the measured workload: pods pod servers (the lab's
// scheduler spreads them evenly over the nodes) and a Service on port
// selecting them.
func workloadYAML(pods int) string {
	return manifests.NetexecDeployment(serverApp, "server", pods, serverPort) + "---\n" + serviceYAML(servicePort)
}

// serviceYAML is the workload's Service on port: applied again with
// another port, it is the one change measured.
func serviceYAML(port int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %s
spec:
  selector: {app: %s}
  ports:
  - name: http
    port: %d
    targetPort: %d
`, serviceName, serverApp, port, serverPort)
}
