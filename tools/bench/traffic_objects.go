package bench

import "github.com/svclab/svclab/tools/bench/manifests"

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
	return manifests.NetexecDeployment(trafficServerApp, "server", 1, serverPort) + "---\n" +
		manifests.NetexecDeployment(trafficClientApp, "client", 1, 8081)
}
