package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/svclab/svclab/scenarios/kit/kube/access"
)

// defaultServiceAccount is who `svclab conformance rbac` binds the roles
// to when no subject is given: the service account of the suite's Job.
const defaultServiceAccount = "svclab-conformance/svclab-conformance"

// newConformanceRBAC is `svclab conformance rbac`: the RBAC the suite
// needs, as YAML to apply, from the one table the suite also checks each
// of its requests against (access.Permissions).
func newConformanceRBAC() *cobra.Command {
	var (
		opts            access.RBACOptions
		serviceAccounts []string
		users, groups   []string
	)
	cmd := &cobra.Command{
		Use:   "rbac [--service-account NS/NAME | --user NAME | --group NAME]... [--disruptive] [--proxy-config NS/NAME]",
		Short: "Print the ClusterRole, Roles and bindings the conformance suite needs: only the verbs it uses",
		Long: "Prints the RBAC of `svclab conformance` as YAML documents to apply: a ClusterRole for the scenarios' namespaces, " +
			"workloads and reads (the suite makes its namespaces during the run with random names, and RBAC matches no name " +
			"prefix, so those rules hold in every namespace), a Role in the proxy ConfigMap's namespace that reads that " +
			"ConfigMap by name, and with --disruptive the Role the mode switch needs (update that ConfigMap, save and restore it); " +
			"each bound to the subjects given (default: the service account " + defaultServiceAccount + ", the Job's). " +
			"Each rule says why. The suite checks every request it sends against the same table, and a 403 names the rule that grants it.",
		Example: "  svclab conformance rbac --user ci-bot | kubectl apply -f -\n" +
			"  svclab conformance rbac --disruptive --service-account conformance/runner > rbac.yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			subjects, err := rbacSubjects(serviceAccounts, users, groups)
			if err != nil {
				return err
			}
			opts.Subjects = subjects
			out, err := access.RBACManifest(opts)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), out)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&serviceAccounts, "service-account", nil, "bind to this service account, NAMESPACE/NAME (repeatable; default "+defaultServiceAccount+" when no subject is given)")
	fl.StringArrayVar(&users, "user", nil, "bind to this user (repeatable)")
	fl.StringArrayVar(&groups, "group", nil, "bind to this group (repeatable)")
	fl.BoolVar(&opts.Disruptive, "disruptive", false, "add the Role --disruptive runs need (the mode switch rewrites the proxy's ConfigMap and restarts its pods)")
	fl.StringVar(&opts.ProxyConfig, "proxy-config", "", "NAMESPACE/NAME of the proxy's ConfigMap, as given to `svclab conformance` (default "+access.DefaultProxyConfig+")")
	return cmd
}

// rbacSubjects are the bindings' subjects; a service account by default.
func rbacSubjects(serviceAccounts, users, groups []string) ([]rbacv1.Subject, error) {
	if len(serviceAccounts)+len(users)+len(groups) == 0 {
		serviceAccounts = []string{defaultServiceAccount}
	}
	var subjects []rbacv1.Subject
	for _, sa := range serviceAccounts {
		ns, name, ok := strings.Cut(sa, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("--service-account %q: want NAMESPACE/NAME", sa)
		}
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name})
	}
	for _, u := range users {
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	for _, g := range groups {
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
	}
	return subjects, nil
}
