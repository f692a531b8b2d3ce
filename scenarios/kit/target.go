package kit

import (
	"context"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/labs/agents/dnslookup"
	"github.com/svclab/svclab/labs/agents/traffic"
)

// Target is where the conformance scenarios run: svclab's netns labs
// (LabTarget) or a Kubernetes cluster reached through a kubeconfig
// (kube.Target), kind or not. The scenarios see only this interface, so
// one spec runs unchanged on either.
type Target interface {
	// Backend names the backend ("netns" or "kubernetes").
	Backend() string
	// Workspace makes a place for one scenario's workload, on a cluster
	// of at least the given number of nodes: a lab of its own (netns), or
	// a namespace of its own (kubernetes). ErrTooFewNodes if the cluster
	// is smaller. family is the IP family the scenario runs in: the
	// workspace's evidence (iptables-save, nft, conntrack) is that
	// family's, and it shows the objects in that family (InFamily); ""
	// is a single-stack IPv4 cluster's view, as the objects are.
	Workspace(ctx context.Context, prefix string, nodes int, family corev1.IPFamily) (Workspace, error)
	// Families are the IP families the cluster has, its primary one
	// first (how Kubernetes orders them): the kubernetes Service's
	// cluster IPs and the families every node has an InternalIP of.
	Families(ctx context.Context) ([]corev1.IPFamily, error)
	// Proxy is what proxies Services on the target (proxyfacts.go),
	// found once per run.
	Proxy(ctx context.Context) (Proxy, error)
	// Close releases what the target made for the whole run.
	Close(ctx context.Context) error
}

// Workspace is one scenario's workload and what it can see of the nodes.
type Workspace interface {
	// Name is the lab's or the namespace's name.
	Name() string
	// Apply creates the objects of the manifests (Pods, Deployments,
	// Services, ConfigMaps) and returns when the pods are ready, the
	// Services' EndpointSlices list them, and every node's proxy has
	// synced since.
	Apply(ctx context.Context, manifests string) error
	// Delete removes the workspace and everything in it.
	Delete(ctx context.Context) error

	Service(ctx context.Context, name string) (*corev1.Service, error)
	// Pods are the workspace's pods labelled app=<app>, with their node
	// and IP.
	Pods(ctx context.Context, app string) ([]corev1.Pod, error)
	// Nodes are the cluster's nodes, in a stable order.
	Nodes(ctx context.Context) ([]Node, error)

	// Traffic opens n new connections from a client to target, each
	// asking GET /hostname, and returns every connection's outcome.
	Traffic(ctx context.Context, from Client, target netip.AddrPort, n int) (*traffic.Result, error)

	// IPTablesSave is iptables-save of a table on a node (-c with
	// counters); ip6tables-save in an IPv6 workspace.
	IPTablesSave(ctx context.Context, node, table string, counters bool) (string, error)
	// NFTables is `nft -j list table ip kube-proxy` on a node (table ip6
	// kube-proxy in an IPv6 workspace): the table in libnftables' JSON
	// schema (libnftables-json(5)).
	NFTables(ctx context.Context, node string) (string, error)
	// Conntrack is a node's conntrack table, read over netlink (its IPv6
	// entries in an IPv6 workspace: `conntrack -L -f ipv6`).
	Conntrack(ctx context.Context, node string) ([]conntrack.Flow, error)
	// RouteSource is the source address a node's kernel picks to reach
	// dst: the address MASQUERADE rewrites a connection to dst to.
	RouteSource(ctx context.Context, node string, dst netip.Addr) (netip.Addr, error)

	// ProxyMode is what the node's proxy answers on :10249/proxyMode.
	ProxyMode(ctx context.Context, node string) (string, error)
	// ProxyModes are the modes the proxy and the nodes' kernels can run.
	ProxyModes(ctx context.Context) ([]string, error)
	// SwitchProxyMode does what seed 001 does: edit `mode` in
	// kube-system/kube-proxy's config.conf, delete the proxy pods, wait
	// for new ones, and wait until every node's /proxyMode says mode.
	SwitchProxyMode(ctx context.Context, mode string) error

	// TrafficWith is Traffic with TrafficOptions: the protocol (TCP or
	// UDP), the path (or UDP command), a fixed source port.
	TrafficWith(ctx context.Context, from Client, target netip.AddrPort, o TrafficOptions) (*traffic.Result, error)
	// DeletePods deletes pods of the workspace by name, with a grace
	// period of one second, and returns when they are gone and every
	// node's proxy has synced since.
	DeletePods(ctx context.Context, names ...string) error

	// TrafficFromNode is TrafficWith from a node's own network namespace:
	// its host network, where the kubelet and hostNetwork pods connect
	// from.
	TrafficFromNode(ctx context.Context, node string, target netip.AddrPort, o TrafficOptions) (*traffic.Result, error)
	// Outside is a client outside the cluster for connections to node's
	// addresses, for TrafficWith: the lab's client; on a cluster the host
	// network of another node (outside the pod network, and not node's
	// own). An error wrapping ErrNoOutsideClient says why there is none.
	Outside(ctx context.Context, node string) (Client, error)
	// TerminatePods deletes pods of the workspace with their own grace
	// period and returns once they are terminating — their endpoints
	// serving but not ready — and every node's proxy has synced since,
	// without waiting for them to go.
	TerminatePods(ctx context.Context, names ...string) error
	// LoadBalancerAddress waits at most within for the address the
	// cluster gives a LoadBalancer Service (status.loadBalancer.ingress),
	// then for every node's proxy to have synced since. An error wrapping
	// ErrNoLoadBalancerAddress says none came.
	LoadBalancerAddress(ctx context.Context, service string, within time.Duration) (netip.Addr, error)
	// Lookup asks a pod's resolver for name's records of qtype (A, AAAA or
	// CNAME), as `dig +search` in the pod would (dnslookup).
	Lookup(ctx context.Context, pod, name, qtype string) (dnslookup.Answer, error)
}

// Node is a cluster node.
type Node struct {
	Name string
	IP   netip.Addr // the node's InternalIP (its IPv4 one, if it has one)
	// IPs are every InternalIP of the node, as its status lists them;
	// PodCIDRs its pod ranges (spec.podCIDRs). InFamily picks IP and
	// PodCIDR of one family from them.
	IPs      []netip.Addr
	PodCIDRs []netip.Prefix
	// PodCIDR is the node's pod range (spec.podCIDR; invalid when it has
	// none): detectLocalMode NodeCIDR's local traffic.
	PodCIDR netip.Prefix
}

// Client is where a scenario's connections come from.
type Client struct {
	// Pod is a pod of the workspace; "" is a client outside the cluster's
	// pod network (the lab's client, or a node's host network).
	Pod string
	// Node is the node the connections enter the cluster at: the pod's
	// node, or the node an outside client sits on or routes through.
	Node string
}

// ErrTooFewNodes says a scenario needs a bigger cluster than the target's.
var ErrTooFewNodes = errTooFewNodes{}

type errTooFewNodes struct{}

func (errTooFewNodes) Error() string { return "the cluster has too few nodes for this scenario" }
