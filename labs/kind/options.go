package kind

import (
	"io"
	"time"
)

// CreateOptions configure Create.
type CreateOptions struct {
	ConfigFile string // a kind v1alpha4 Cluster config (required)
	Name       string // default: the config's name, else "svclab"
	CNI        string // one of PodNetworks: cni.FlannelVXLAN (default), cni.CalicoProxyARP, flannel.Name
	Proxy      string // ProxyStock (default) or ProxySvclab
	// CalicoManifestSHA256 is the sha256 of upstream Calico's manifest at
	// calico.Release's version, for --cni calico when the build does not
	// pin one (calico.Release.SHA256 wins when it does and they differ).
	CalicoManifestSHA256 string
	// SvclabBinary is put into the svclab images (CNI agent and plugin,
	// proxy, netexec); default: $SVCLAB_BIN, else this executable.
	SvclabBinary string
	Out          io.Writer     // progress; nil is quiet
	ReadyTimeout time.Duration // for nodes and system pods (default 3m)
}

// Cluster is a kind cluster svclab knows.
type Cluster struct {
	Name       string
	Nodes      []string // container names (N-control-plane, N-worker…)
	CNI        string
	Proxy      string
	ProxyMode  string
	NodeImage  string
	Kubeconfig string // kind's kubeconfig (reaches 127.0.0.1 in the daemon's namespace)
	// DockerHost is DOCKER_HOST for `docker exec` into the nodes ("" for
	// the default daemon).
	DockerHost string
	// Namespace is the network namespace the nodes' network is in
	// (dockerhost.Namespace when svclab runs Docker, "" otherwise).
	Namespace string
	// LoadBalancerPool is where LoadBalancer Services get their address
	// (first-last, in the kind network's subnet); LoadBalancerRoute the
	// route svclab added for it in Namespace ("" with a Docker of the
	// user's: the pool is then reached from the nodes and pods).
	LoadBalancerPool  string
	LoadBalancerRoute string
	Took              time.Duration
}
