package selfexec

import (
	"github.com/spf13/pflag"

	"github.com/svclab/svclab/labs/agents/clusterdns"
	"github.com/svclab/svclab/labs/agents/netexec"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/proxy"
)

// Proxy is `svclab proxy`: the embedded kube-proxy (one per lab node, or a
// DaemonSet's pod on a kind cluster).
type Proxy struct {
	proxy.Options
	// Cleanup removes what the proxy modes made and exits (kube-proxy --cleanup).
	Cleanup bool
}

// Subcommand implements Command.
func (*Proxy) Subcommand() []string { return []string{"proxy"} }

// AddFlags implements Command.
func (p *Proxy) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.LabDir, "lab-dir", "", "a lab's state directory (lab mode)")
	fs.StringVar(&p.NodeName, "node", "", "this node's name")
	fs.StringVar(&p.NodeName, "hostname-override", "", "this node's name (kube-proxy's flag)")
	markAlias(fs, "hostname-override")
	fs.StringVar(&p.Kubeconfig, "kubeconfig", "", "kubeconfig of a cluster (cluster mode; in-cluster config when empty)")
	fs.StringVar(&p.ConfigFile, "config", "", "KubeProxyConfiguration file (default: the kube-system/kube-proxy ConfigMap)")
	fs.BoolVar(&p.Cleanup, "cleanup", false, "remove what kube-proxy's modes made (chains, IPVS services, kube-ipvs0, ipsets) and exit, like kube-proxy --cleanup")
	fs.StringVar(&p.IPTablesBackend, "iptables-backend", "", "iptables backend: legacy or nft (default: the host's iptables)")
	addrSliceVar(fs, &p.NodeIPs, "node-ip", "a lab node's address, primary family first; repeat for dual-stack (lab mode; a cluster's proxy reads its Node object)")
}

// Netexec is `svclab netexec`: a pod's agnhost-netexec-compatible server.
type Netexec struct {
	netexec.Options
}

// Subcommand implements Command.
func (*Netexec) Subcommand() []string { return []string{"netexec"} }

// AddFlags implements Command.
func (n *Netexec) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&n.PodName, "pod-name", "", "what /hostname answers (default: the host name)")
	fs.StringVar(&n.NodeName, "node-name", "", "node name reported by /")
	fs.IntSliceVar(&n.Ports, "http-port", nil, "port to serve on (repeatable; default 8080)")
	fs.IntSliceVar(&n.UDPPorts, "udp-port", nil, "UDP port to answer hostname, echo and clientip on (repeatable, may be an --http-port; default 8081, -1 for none, as agnhost netexec's)")
	fs.Var((*agnhostSeconds)(&n.DelayShutdown), "delay-shutdown", "go on serving this long after SIGTERM: whole seconds, as agnhost netexec's --delay-shutdown, or a duration")
}

// Traffic is `svclab traffic`: N new connections and how they spread.
type Traffic struct {
	traffic.Options
	// Raw prints the whole result as JSON (what a caller parses).
	Raw bool
	// Lab and From run the traffic inside a host of a lab.
	Lab, From string
	// Output is the report's format: table or json.
	Output string
}

// Subcommand implements Command.
func (*Traffic) Subcommand() []string { return []string{"traffic"} }

// AddFlags implements Command.
func (t *Traffic) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&t.Lab, "lab", "", "lab name (with --from)")
	fs.StringVar(&t.From, "from", "", "the lab host to connect from: a client, node or pod")
	fs.StringVar(&t.Target, "to", "", "IP:PORT to connect to (a ClusterIP:port or nodeIP:nodePort); an IPv6 address in brackets: [fd00:10:96::a]:80")
	fs.StringVar(&t.Protocol, "protocol", traffic.ProtocolTCP, "tcp (HTTP GETs) or udp (agnhost netexec's UDP commands, a new socket each)")
	fs.StringVar(&t.SourceIP, "source", "", "local address to connect from (default: the one the kernel picks)")
	fs.IntVar(&t.SourcePort, "source-port", 0, "local port every connection comes from, one at a time (udp: one conntrack entry for all; tcp: one connection only)")
	fs.IntVarP(&t.Connections, "count", "c", 100, "number of new connections")
	fs.IntVar(&t.Parallelism, "parallel", traffic.DefaultParallelism, "connections open at once")
	fs.DurationVar(&t.Timeout, "timeout", traffic.DefaultTimeout, "timeout of one connection")
	fs.DurationVar(&t.Deadline, "deadline", traffic.DefaultDeadline, "deadline of the whole run")
	fs.StringVar(&t.Path, "path", traffic.DefaultPath, "HTTP path to GET (udp: /hostname, /clientip or /echo?msg=MSG)")
	fs.StringSliceVar(&t.Expected, "expect", nil, "the expected split: backends NAME or NAME=WEIGHT, shares in proportion to the weights (default: uniform over those that answered)")
	fs.Float64Var(&t.Alpha, "alpha", traffic.DefaultAlpha, "significance level: the split fails (exit 1) when its chi-square p-value is below it; the default fails a correct proxy once in 10^6 runs")
	fs.StringVarP(&t.Output, "output", "o", "table", "output format: table, json, bars (the split as bars against the expected shares) or svg (the bars as a picture)")
	fs.BoolVar(&t.Raw, "raw", false, "print the whole result, every connection included, as JSON")
}

// CNIAgent is `svclab cni agent`: the kind CNI's per-node DaemonSet pod.
type CNIAgent struct {
	Variant     string
	ClusterCIDR string
}

// Subcommand implements Command.
func (*CNIAgent) Subcommand() []string { return []string{"cni", "agent"} }

// DefaultCNIVariant is the agent's variant when none is given.
const DefaultCNIVariant = "flannel-vxlan"

// AddFlags implements Command.
func (a *CNIAgent) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&a.Variant, "variant", DefaultCNIVariant, "CNI variant")
	fs.StringVar(&a.ClusterCIDR, "cluster-cidr", "", "the cluster's pod network (for the masquerade rules)")
}

// DNS is `svclab dns`: the lab's cluster DNS server, the process of the
// coredns pod behind kube-system/kube-dns.
type DNS struct {
	clusterdns.Options
}

// Subcommand implements Command.
func (*DNS) Subcommand() []string { return []string{"dns"} }

// AddFlags implements Command.
func (d *DNS) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&d.LabDir, "lab-dir", "", "the lab's state directory, whose Services and EndpointSlices the server answers from")
	fs.StringVar(&d.Listen, "listen", "", "UDP and TCP address to answer on (default "+clusterdns.DefaultListen+")")
	fs.StringVar(&d.MetricsListen, "metrics-listen", "", "address of /metrics (default "+clusterdns.DefaultMetricsListen+"; - for none)")
	fs.StringVar(&d.Zone, "cluster-domain", "", "the cluster domain (default "+clusterdns.DefaultZone+")")
}

// LoadBalancer is `svclab loadbalancer`: the load balancer of svclab's
// kind clusters (the svclab-loadbalancer Deployment's pod).
type LoadBalancer struct {
	Pool string
}

// Subcommand implements Command.
func (*LoadBalancer) Subcommand() []string { return []string{"loadbalancer"} }

// AddFlags implements Command.
func (l *LoadBalancer) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&l.Pool, "pool", "", "the IPv4 addresses LoadBalancer Services get: a CIDR or first-last")
}
