package cmdline

// SpecLabel is one label of the conformance suite's specs, what `svclab
// conformance --label-filter` selects by.
type SpecLabel struct {
	Name string
	// About says which specs carry it.
	About string
}

// SpecLabels are every label the suite's specs carry, each once, sorted:
// the vocabulary of --label-filter, which the CLI's help names and its
// shell completion offers. It lives here, not beside the specs, because
// the CLI links no test framework (tools/svclab/deps_test.go) and the
// specs' package is ginkgo's; scenarios/conformance's
// TestLabelsAreTheSpecs keeps it equal to the labels the specs' Label(…)
// calls give.
var SpecLabels = []SpecLabel{
	{"Disruptive", "restarts components (the proxy's pods); runs only with --disruptive"},
	{"IPv4", "a spec's IPv4 run on a cluster with IPv6 too (a single-stack IPv4 run tags none)"},
	{"IPv6", "a spec's IPv6 run: its Services single-stack IPv6, its evidence ip6tables, table ip6 and IPv6 conntrack entries"},
	{"affinity", "ClientIP session affinity"},
	{"clusterip", "ClusterIP Services: TCP and UDP on one port, several named ports"},
	{"conntrack", "UDP conntrack entries cleared when endpoints change"},
	{"cross-node", "needs two nodes the scenarios can use"},
	{"distribution", "how connections split over the endpoints (50/50, the three-pod ladder)"},
	{"dns", "Services through cluster DNS"},
	{"dual-stack", "a dual-stack Service: one cluster IP per family, both to the same endpoints (dual-stack clusters)"},
	{"hairpin", "a pod reaching itself through its own Service"},
	{"kube-proxy-internals", "asserts kube-proxy's rules, chain names, nft table or /proxyMode"},
	{"loadbalancer", "LoadBalancer Services where the cluster assigns addresses"},
	{"mode-switch", "switches the proxy mode through the proxy's ConfigMap (Disruptive)"},
	{"multiport", "a Service with two named ports"},
	{"nodeport", "NodePort Services"},
	{"nodeport-sources", "NodePort from a pod, a node and outside"},
	{"noendpoints", "a Service without endpoints (rejected, not dropped)"},
	{"terminating", "the terminating-endpoint fallback"},
	{"trafficpolicy", "externalTrafficPolicy and internalTrafficPolicy Local"},
	{"udp", "UDP Services"},
}

// LabelNames are SpecLabels' names, in order.
func LabelNames() []string {
	names := make([]string, len(SpecLabels))
	for i, l := range SpecLabels {
		names[i] = l.Name
	}
	return names
}
