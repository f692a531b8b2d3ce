package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/svclab/svclab/tools/cli/kubeprint"
)

// describers are the kinds `svclab describe` knows, by plural.
var describers = map[string]func(v *labView, obj runtime.Object) string{
	"services": func(v *labView, obj runtime.Object) string {
		svc := obj.(*corev1.Service)
		var slices []discoveryv1.EndpointSlice
		for _, s := range v.objs.EndpointSlices {
			if s.Namespace == svc.Namespace && s.Labels[discoveryv1.LabelServiceName] == svc.Name {
				slices = append(slices, *s)
			}
		}
		return kubeprint.DescribeService(svc, slices)
	},
	"pods": func(_ *labView, obj runtime.Object) string { return kubeprint.DescribePod(obj.(*corev1.Pod)) },
}

// newDescribe is `kubectl describe` for a lab's Services and Pods.
func newDescribe() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show a lab's Service or Pod in detail, as kubectl describe does",
		Example: "  sudo svclab describe svc nginx\n" +
			"  sudo svclab describe pod -l app=nginx",
	}
	for _, r := range resources {
		if describers[r.plural] != nil {
			cmd.AddCommand(newDescribeResource(r))
		}
	}
	return cmd
}

// describeExamples are the examples of describe's kinds.
var describeExamples = map[string]string{
	"services": "  sudo svclab describe svc nginx     # Endpoints: 10.244.1.2:80,10.244.1.3:80,10.244.1.4:80\n" +
		"  sudo svclab describe services -A --lab nodeport",
	"pods": "  sudo svclab describe pod nginx-0\n" +
		"  sudo svclab describe pods -l app=nginx",
}

func newDescribeResource(r resource) *cobra.Command {
	var f getFlags
	cmd := &cobra.Command{
		Use:     r.plural + " [NAME…]",
		Aliases: r.aliases,
		Short:   fmt.Sprintf("Describe %s (all in the namespace, or those named or selected)", r.plural),
		Example: describeExamples[r.plural],
		ValidArgsFunction: func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return completeObjectNames(cmd, r, toComplete)
		},
		RunE: func(cmd *cobra.Command, names []string) error {
			sel := selection{namespace: f.namespace, allNamespaces: f.allNamespaces, selector: f.selector, names: names}
			if err := sel.check(); err != nil {
				return err
			}
			l, err := openLab(f.lab)
			if err != nil {
				return err
			}
			v, err := newLabView(l)
			if err != nil {
				return err
			}
			all, err := r.listed(v)
			if err != nil {
				return err
			}
			picked, notFound, err := sel.pick(r, all)
			if err != nil {
				return err
			}
			writeDescriptions(cmd.OutOrStdout(), v, r, picked)
			if len(picked) == 0 && notFound == nil {
				fmt.Fprintln(cmd.ErrOrStderr(), sel.noResources(r))
			}
			return notFound
		},
	}
	addLabFlag(cmd, &f.lab)
	addNamespaceFlag(cmd, &f.namespace)
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "describe the objects of every namespace")
	cmd.Flags().StringVarP(&f.selector, "selector", "l", "", "label selector")
	return cmd
}

// writeDescriptions writes each description, a blank line between two,
// as kubectl does.
func writeDescriptions(w io.Writer, v *labView, r resource, objs []runtime.Object) {
	for i, o := range objs {
		if i > 0 {
			fmt.Fprint(w, "\n\n")
		}
		fmt.Fprint(w, describers[r.plural](v, o))
	}
}
