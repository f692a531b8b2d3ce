package bench

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/svclab/svclab/labs/netns/workload"
	"github.com/svclab/svclab/tools/bench/manifests"
)

// The benchmark's lab: one node, one outside client, flannel's VXLAN CNI,
// the lab's usual subnets.
const (
	nodeName      = "node1"
	serviceSubnet = "10.96.0.0/16"
	// firstServiceIP is the cluster IP of Service 0; Service i has
	// firstServiceIP + i (set in the manifest, so that the probe knows the
	// last one's before the apply).
	firstServiceIP = "10.96.16.0"
	namespace      = "default"
	servicePort    = 80
	serverPort     = 8080
	// serverReplicas is how many pod servers every Service's endpoints
	// point at.
	serverReplicas = 2
	serverApp      = "bench-server"
	clientApp      = "bench-client"
)

// topologyYAML is the lab file of one measurement.
func topologyYAML(lab string, m Mode) string {
	proxyMode := "iptables" // nftables is switched on through the ConfigMap (configMapWithMode)
	if m.ProxyMode == "ipvs" {
		proxyMode = "ipvs"
	}
	return fmt.Sprintf(`# svclab bench dataplane: mode %s
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata:
  name: %s
spec:
  cni: flannel-vxlan
  podSubnet: 10.244.0.0/16
  serviceSubnet: %s
  proxy:
    mode: %s
    iptablesBackend: %q
  nodes:
  - name: %s
    ip: 192.168.16.73/20
    podCIDR: 10.244.1.0/24
  clients:
  - name: client
    ip: 192.168.55.230/24
`, m.Name, lab, serviceSubnet, proxyMode, string(m.Backend), nodeName)
}

// podsYAML are the pods of a measurement: the servers every Service
// selects, and the client pod that dials them.
func podsYAML() string {
	return manifests.NetexecDeployment(serverApp, "server", serverReplicas, serverPort) + "---\n" +
		manifests.NetexecDeployment(clientApp, "client", 1, 8081)
}

// serviceName is the name of Service i; names sort as the Services are
// numbered, so the first is early and the last late in the proxy's
// KUBE-SERVICES chain.
func serviceName(i int) string { return fmt.Sprintf("bench-%05d", i) }

// serviceIP is the cluster IP of Service i.
func serviceIP(i int) netip.Addr {
	a := netip.MustParseAddr(firstServiceIP).As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]) + uint32(i)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// decodeServices decodes servicesYAML(0…n-1) in parts of at most
// workload.MaxManifestObjects, as a user's kubectl would send them, into
// one set of manifests applied in one change.
func decodeServices(n int) (*workload.Manifests, error) {
	m := &workload.Manifests{}
	for from := 0; from < n; from += workload.MaxManifestObjects {
		to := min(n, from+workload.MaxManifestObjects)
		part, err := workload.Decode([]byte(servicesYAML(from, to)), fmt.Sprintf("generated Services %d…%d", from, to-1))
		if err != nil {
			return nil, err
		}
		m.Append(part)
	}
	return m, nil
}

// servicesYAML are the ClusterIP Services from…to-1, each selecting the
// pod servers: the apply that is measured.
func servicesYAML(from, to int) string {
	var b strings.Builder
	b.Grow((to - from) * 256)
	for i := from; i < to; i++ {
		if i > from {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata:
  name: %s
spec:
  clusterIP: %s
  selector: {app: %s}
  ports:
  - name: http
    port: %d
    targetPort: %d
`, serviceName(i), serviceIP(i), serverApp, servicePort, serverPort)
	}
	return b.String()
}

// modeLine is the mode field of a KubeProxyConfiguration.
var modeLine = regexp.MustCompile(`(?m)^mode:.*$`)

// nftablesSection is the nftables section of a KubeProxyConfiguration.
var nftablesSection = regexp.MustCompile(`(?m)^nftables:`)

// configMapWithMode returns the kube-system/kube-proxy ConfigMap as a
// manifest, its config.conf (conf, as the lab stored it) with mode set.
func configMapWithMode(conf, mode string) (string, error) {
	if !modeLine.MatchString(conf) {
		return "", fmt.Errorf("kube-system/kube-proxy config.conf: no mode field to set")
	}
	conf = modeLine.ReplaceAllString(conf, fmt.Sprintf("mode: %q", mode))
	if mode == "nftables" && !nftablesSection.MatchString(conf) {
		// The lab's 100ms for iptables, in the nftables section too
		// (upstream's default is 1s there as well): each mode is measured
		// with the same least time between two syncs.
		conf = strings.TrimRight(conf, "\n") + "\nnftables:\n  minSyncPeriod: 100ms\n  syncPeriod: 0s\n"
	}
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kube-proxy\n  namespace: kube-system\n  labels: {app: kube-proxy}\ndata:\n  config.conf: |\n    " +
		strings.ReplaceAll(strings.TrimRight(conf, "\n"), "\n", "\n    ") + "\n", nil
}
