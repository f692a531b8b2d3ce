package access

import (
	"fmt"
	"slices"
	"strings"
)

// The RBAC the suite needs is one table, permissions: `svclab conformance
// rbac` prints it (RBACManifest), every request the suite sends is checked
// against it before it leaves (guardTransport: a call outside the table
// fails in every run, the kind runs included, so the printed RBAC is
// always enough), and a 403 names the rule that grants the request.

// Rule is one grant of the table: RBAC's API groups, resources (with
// "resource/subresource"), verbs and resource names (none: any object),
// and why the suite needs it.
type Rule struct {
	Groups, Resources, Verbs, Names []string
	Why                             string
}

// Role is the rules granted together: a ClusterRole (Namespace "") or a
// Role in Namespace.
type Role struct {
	Name, Namespace string
	// Disruptive roles are needed only by --disruptive runs (and by the
	// restore of what a killed one changed).
	Disruptive bool
	Why        string
	Rules      []Rule
}

// Kind is ClusterRole or Role.
func (r Role) Kind() string {
	if r.Namespace == "" {
		return "ClusterRole"
	}
	return "Role"
}

// The roles' names.
const (
	ClusterRoleName     = "svclab-conformance"
	ProxyConfigRoleName = "svclab-conformance-proxy-config"
	DisruptiveRoleName  = "svclab-conformance-disruptive"
)

// Permissions is every permission the suite uses, on a cluster whose
// proxy keeps its configuration in the ConfigMap proxyConfig
// ("NAMESPACE/NAME", "" is kubeadm's kube-system/kube-proxy).
//
// The suite's namespaces are made during the run with random names, and
// RBAC matches no name prefix: the namespaced rules the scenarios need
// are in the ClusterRole, so they hold in every namespace. Only what
// touches the proxy's namespace is a Role there.
func Permissions(proxyConfig string) ([]Role, error) {
	proxyNS, proxyName, err := ParseProxyConfig(proxyConfig)
	if err != nil {
		return nil, err
	}
	core, apps, discovery, coordination := []string{""}, []string{"apps"}, []string{"discovery.k8s.io"}, []string{"coordination.k8s.io"}
	return []Role{{
		Name: ClusterRoleName,
		Why:  "the scenarios' namespaces and workloads, the node agent, and reading what the cluster did",
		Rules: []Rule{
			{Groups: core, Resources: []string{"nodes"}, Verbs: []string{"list"},
				Why: "the cluster answers (the first request), and the nodes the scenarios use"},
			{Groups: core, Resources: []string{"namespaces"}, Verbs: []string{"create", "delete", "get", "list"},
				Why: "a namespace per scenario and one for the node agent, deleted at the end (get: until gone); list: what earlier runs left"},
			{Groups: core, Resources: []string{"pods"}, Verbs: []string{"create", "delete", "get", "list"},
				Why: "the scenarios' pods, deleted to end endpoints; which pods are ready, where the node agent runs, the proxy's pods; --disruptive restarts the proxy's (delete cannot be limited by label or namespace: the scenarios' namespaces are made during the run)"},
			{Groups: core, Resources: []string{"pods/exec"}, Verbs: []string{"create"},
				Why: "traffic from the scenarios' pods, and the node agent's reads (conntrack, iptables-save, nft); a WebSocket exec that an older API server authorizes as get falls back to SPDY's create"},
			{Groups: core, Resources: []string{"configmaps"}, Verbs: []string{"get"}, Names: []string{"cilium-config"},
				Why: "whether Cilium replaces kube-proxy, on a cluster without kube-proxy (Cilium's ConfigMap, in the namespace Cilium runs in)"},
			{Groups: core, Resources: []string{"events"}, Verbs: []string{"list"},
				Why: "the kubelet's reason when a pod cannot start (an image that does not pull)"},
			{Groups: core, Resources: []string{"services"}, Verbs: []string{"create", "get", "list"},
				Why: "the scenarios' Services"},
			{Groups: apps, Resources: []string{"deployments"}, Verbs: []string{"create", "list"},
				Why: "the scenarios' backends, and whether they are ready"},
			{Groups: apps, Resources: []string{"daemonsets"}, Verbs: []string{"create", "get", "list"},
				Why: "the node agent, and whether it runs on its nodes; list: which DaemonSet proxies Services"},
			{Groups: discovery, Resources: []string{"endpointslices"}, Verbs: []string{"list"},
				Why: "whether a Service's endpoints are ready"},
			{Groups: coordination, Resources: []string{"leases"}, Verbs: []string{"create"},
				Why: "the run's heartbeat, a Lease in the node agent's namespace (create cannot be limited to a name)"},
			{Groups: coordination, Resources: []string{"leases"}, Verbs: []string{"get", "update"}, Names: []string{RunLeaseName},
				Why: "renewing the heartbeat; reading an earlier run's, to tell a running run from a killed one"},
		},
	}, {
		Name: ProxyConfigRoleName, Namespace: proxyNS,
		Why: "reading the proxy's configuration",
		Rules: []Rule{
			{Groups: core, Resources: []string{"configmaps"}, Verbs: []string{"get"}, Names: []string{proxyName, SavedProxyConfigName},
				Why: "the proxy's configuration, and the copy a --disruptive run saved before changing it (restored if that run was killed)"},
		},
	}, {
		Name: DisruptiveRoleName, Namespace: proxyNS, Disruptive: true,
		Why: "--disruptive: the mode switch rewrites the proxy's ConfigMap and restarts its pods, then restores both",
		Rules: []Rule{
			{Groups: core, Resources: []string{"configmaps"}, Verbs: []string{"create"},
				Why: "saving the proxy's configuration before the first change (create cannot be limited to a name)"},
			{Groups: core, Resources: []string{"configmaps"}, Verbs: []string{"update"}, Names: []string{proxyName},
				Why: "the mode switch, and putting the saved configuration back"},
			{Groups: core, Resources: []string{"configmaps"}, Verbs: []string{"delete"}, Names: []string{SavedProxyConfigName},
				Why: "the saved copy, once restored"},
		},
	}}, nil
}

// Request is what RBAC authorizes a request as: a verb on a resource
// (and subresource) of an API group, in a namespace ("" cluster-wide),
// on a named object ("" for create and list); or a non-resource path.
type Request struct {
	Verb, Group, Resource, Subresource, Namespace, Name string
	NonResourcePath                                     string
}

// FullResource is "resource" or "resource/subresource", as RBAC spells it.
func (r Request) FullResource() string {
	if r.Subresource != "" {
		return r.Resource + "/" + r.Subresource
	}
	return r.Resource
}

// String is "VERB RESOURCE in NAMESPACE" ("cluster-wide" without one).
func (r Request) String() string {
	if r.NonResourcePath != "" {
		return strings.ToLower(r.Verb) + " " + r.NonResourcePath
	}
	res := r.FullResource()
	if r.Group != "" {
		res += "." + r.Group
	}
	if r.Name != "" {
		res += " " + r.Name
	}
	where := "cluster-wide"
	if r.Namespace != "" {
		where = "in " + r.Namespace
	}
	return r.Verb + " " + res + " " + where
}

// Grant is the role and rule of the table that grant a request.
type Grant struct {
	Role Role
	Rule Rule
}

// Grants finds the rule of roles that grants req.
func Grants(roles []Role, req Request) (Grant, bool) {
	for _, role := range roles {
		if role.Namespace != "" && role.Namespace != req.Namespace {
			continue
		}
		for _, rule := range role.Rules {
			if slices.Contains(rule.Groups, req.Group) && slices.Contains(rule.Resources, req.FullResource()) &&
				slices.Contains(rule.Verbs, req.Verb) && (len(rule.Names) == 0 || (req.Name != "" && slices.Contains(rule.Names, req.Name))) {
				return Grant{role, rule}, true
			}
		}
	}
	return Grant{}, false
}

// String names the rule as `svclab conformance rbac` prints it.
func (g Grant) String() string {
	where := ""
	if g.Role.Namespace != "" {
		where = " in " + g.Role.Namespace
	}
	cmd := "svclab conformance rbac"
	if g.Role.Disruptive {
		cmd += " --disruptive"
	}
	return fmt.Sprintf("the %s %s%s that `%s` prints grants it (%s)", g.Role.Kind(), g.Role.Name, where, cmd, g.Rule.Summary())
}

// Summary is "resources [names]: verbs".
func (r Rule) Summary() string {
	s := strings.Join(r.Resources, ",")
	if len(r.Names) > 0 {
		s += " " + strings.Join(r.Names, ",")
	}
	return s + ": " + strings.Join(r.Verbs, ",")
}
