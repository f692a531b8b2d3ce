package access

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// RBACOptions say which RBAC RBACManifest prints.
type RBACOptions struct {
	// ProxyConfig is the proxy's ConfigMap, "NAMESPACE/NAME" ("" is
	// kube-system/kube-proxy): the namespace of the Roles.
	ProxyConfig string
	// Disruptive adds the Role --disruptive runs need.
	Disruptive bool
	// Subjects are who the roles are bound to.
	Subjects []rbacv1.Subject
}

// RBACManifest is the RBAC of Permissions as YAML documents: each role
// and its binding to the subjects, each rule preceded by a comment
// saying why the suite needs it.
func RBACManifest(opts RBACOptions) (string, error) {
	if len(opts.Subjects) == 0 {
		return "", fmt.Errorf("no subject to bind the roles to")
	}
	roles, err := Permissions(opts.ProxyConfig)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# The RBAC of `svclab conformance`: only the verbs and resources the suite uses.\n" +
		"# The suite makes its namespaces during the run, with random names, and RBAC matches no\n" +
		"# name prefix: the ClusterRole's namespaced rules hold in every namespace.\n")
	first := true
	for _, role := range roles {
		if role.Disruptive && !opts.Disruptive {
			continue
		}
		objects := []any{roleObject(role), bindingObject(role, opts.Subjects)}
		for i, obj := range objects {
			out, err := yaml.Marshal(obj)
			if err != nil {
				return "", err
			}
			if !first {
				b.WriteString("---\n")
			}
			first = false
			if i == 0 {
				b.WriteString("# " + role.Why + "\n")
				b.WriteString(commentRules(string(out), role.Rules))
			} else {
				b.Write(out)
			}
		}
	}
	return b.String(), nil
}

// commentRules puts each rule's why before it in a marshalled role (the
// rules are marshalled in order, each starting with "- apiGroups:").
func commentRules(marshalled string, rules []Rule) string {
	var b strings.Builder
	i := 0
	for _, line := range strings.SplitAfter(marshalled, "\n") {
		if strings.HasPrefix(line, "- apiGroups:") && i < len(rules) {
			b.WriteString("# " + rules[i].Why + "\n")
			i++
		}
		b.WriteString(line)
	}
	return b.String()
}

func roleObject(role Role) any {
	var rules []rbacv1.PolicyRule
	for _, r := range role.Rules {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: r.Groups, Resources: r.Resources, Verbs: r.Verbs, ResourceNames: r.Names})
	}
	meta := metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": ManagedBy}}
	if role.Namespace == "" {
		return &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: meta, Rules: rules}
	}
	return &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta, Rules: rules}
}

func bindingObject(role Role, subjects []rbacv1.Subject) any {
	meta := metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": ManagedBy}}
	ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: role.Kind(), Name: role.Name}
	if role.Namespace == "" {
		return &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}, ObjectMeta: meta, RoleRef: ref, Subjects: subjects}
	}
	return &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta, RoleRef: ref, Subjects: subjects}
}
