package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/svclab/svclab/scenarios/kit"
)

// Inspection is what `svclab conformance --dry-run` reports of a cluster,
// found with API reads only.
type Inspection struct {
	// Server is the API server's address.
	Server string
	// Proxy is what proxies Services (Discover); its mode is the
	// configuration's, as no node agent runs to ask /proxyMode.
	Proxy kit.Proxy
	// Nodes are the cluster's nodes, each saying whether the scenarios
	// may use it.
	Nodes []InspectedNode
	// LoadBalancer says whether Services of type LoadBalancer get
	// addresses, and why it is thought so.
	LoadBalancer string
}

// InspectedNode is a node and whether the node agent, and so the
// scenarios, would run on it ("" Unusable) or why not.
type InspectedNode struct {
	Name     string
	Unusable string
}

// Usable is how many nodes the scenarios may use.
func (in *Inspection) Usable() int {
	n := 0
	for _, node := range in.Nodes {
		if node.Unusable == "" {
			n++
		}
	}
	return n
}

// Inspect reads what the suite would find on the cluster of cfg — the
// proxy, the nodes the node agent would run on (opts.NodeSelector,
// opts.TolerateAll), whether LoadBalancer addresses get assigned —
// creating nothing: every request goes through the RBAC table's guard,
// and is a get or a list.
func Inspect(ctx context.Context, cfg *rest.Config, opts Options) (*Inspection, error) {
	t, err := connect(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	d, err := Discover(ctx, t.clientset, opts.ProxyConfig)
	if err != nil {
		return nil, err
	}
	in := &Inspection{Server: cfg.Host, Proxy: d.Proxy}
	if in.Nodes, err = inspectNodes(ctx, t.clientset, opts); err != nil {
		return nil, err
	}
	in.LoadBalancer = loadBalancerSupport(ctx, t.clientset)
	return in, nil
}

// inspectNodes are the cluster's nodes, each usable when it has the
// selector's labels and no taint that keeps the agent off (NoSchedule or
// NoExecute, unless TolerateAll).
func inspectNodes(ctx context.Context, cs kubernetes.Interface, opts Options) ([]InspectedNode, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	selector := labels.SelectorFromSet(opts.NodeSelector)
	var out []InspectedNode
	for _, n := range list.Items {
		node := InspectedNode{Name: n.Name}
		switch {
		case !selector.Matches(labels.Set(n.Labels)):
			node.Unusable = "not selected by --node-selector " + selector.String()
		case !opts.TolerateAll:
			for _, taint := range n.Spec.Taints {
				if taint.Effect == corev1.TaintEffectNoSchedule || taint.Effect == corev1.TaintEffectNoExecute {
					node.Unusable = fmt.Sprintf("taint %s (--tolerate-all)", taint.ToString())
					break
				}
			}
		}
		out = append(out, node)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// loadBalancerControllers are images of controllers that give Services of
// type LoadBalancer their addresses, by the name part of the image.
var loadBalancerControllers = map[string]string{
	"controller":                   "", // too common a name alone: only with metallb in the path (below)
	"metallb-controller":           "MetalLB",
	"kube-vip":                     "kube-vip",
	"kube-vip-cloud-provider":      "kube-vip's cloud provider",
	"cloud-provider-kind":          "cloud-provider-kind",
	"aws-load-balancer-controller": "the AWS Load Balancer Controller",
	"cloud-controller-manager":     "a cloud controller manager",
	"purelb":                       "PureLB",
	"openelb":                      "OpenELB",
}

// loadBalancerSupport says whether Services of type LoadBalancer get
// addresses: yes when one already has, likely when a known controller
// runs (or the nodes are a cloud's), else unknown until a run makes one.
// Errors (a forbidden list) only make the answer less sure.
func loadBalancerSupport(ctx context.Context, cs kubernetes.Interface) string {
	if svcs, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{}); err == nil {
		for _, s := range svcs.Items {
			if s.Spec.Type == corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) > 0 {
				in := s.Status.LoadBalancer.Ingress[0]
				return fmt.Sprintf("yes: Service %s/%s has the address %s", s.Namespace, s.Name, in.IP+in.Hostname)
			}
		}
	}
	if found := knownLoadBalancerController(ctx, cs); found != "" {
		return "likely: " + found + " runs (a Service of type LoadBalancer shows it only once made)"
	}
	if nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		for _, n := range nodes.Items {
			if provider, _, ok := strings.Cut(n.Spec.ProviderID, "://"); ok && provider != "kind" {
				return fmt.Sprintf("likely: the nodes are %s's (providerID %s), whose cloud controller assigns them", provider, n.Spec.ProviderID)
			}
		}
	}
	return "unknown until run: no Service of type LoadBalancer has an address and no known controller runs"
}

// workloadTemplate is a workload's pod template and what the workload is.
type workloadTemplate struct {
	where string
	spec  corev1.PodSpec
}

// knownLoadBalancerController names a known LoadBalancer controller among
// the cluster's Deployments and DaemonSets ("" none).
func knownLoadBalancerController(ctx context.Context, cs kubernetes.Interface) string {
	var templates []workloadTemplate
	if deps, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{}); err == nil {
		for _, d := range deps.Items {
			templates = append(templates, workloadTemplate{"Deployment " + d.Namespace + "/" + d.Name, d.Spec.Template.Spec})
		}
	}
	if dss, err := cs.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{}); err == nil {
		for _, ds := range dss.Items {
			templates = append(templates, workloadTemplate{"DaemonSet " + ds.Namespace + "/" + ds.Name, ds.Spec.Template.Spec})
		}
	}
	for _, tmpl := range templates {
		for _, c := range tmpl.spec.Containers {
			name := imageName(c.Image)
			what := loadBalancerControllers[name]
			if name == "controller" && strings.Contains(c.Image, "metallb") {
				what = "MetalLB"
			}
			if what != "" {
				return fmt.Sprintf("%s (%s, %s)", what, tmpl.where, c.Image)
			}
		}
	}
	return ""
}
