package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/cli/kubeprint"
)

// getFlags are kubectl get's flags.
type getFlags struct {
	lab, namespace, selector, output string
	allNamespaces                    bool
	noHeaders, showLabels            bool
}

func (f *getFlags) add(cmd *cobra.Command, namespaced bool) {
	addLabFlag(cmd, &f.lab)
	fl := cmd.Flags()
	if namespaced {
		addNamespaceFlag(cmd, &f.namespace)
		fl.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "list the objects of every namespace (a NAMESPACE column first)")
	}
	fl.StringVarP(&f.selector, "selector", "l", "", "label selector (e.g. -l app=nginx,tier!=db, -l 'env in (a,b)')")
	fl.StringVarP(&f.output, "output", "o", "", "output format: wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-as-json=TEMPLATE or custom-columns=HEADER:PATH,… (default: a table)")
	fl.BoolVar(&f.noHeaders, "no-headers", false, "print the table without its header line")
	fl.BoolVar(&f.showLabels, "show-labels", false, "add a LABELS column to the table")
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(kubeprint.Outputs, cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists
}

// addNamespaceFlag is -n/--namespace, default "default" as in a
// kubeconfig context without one, completed with the lab's namespaces.
func addNamespaceFlag(cmd *cobra.Command, namespace *string) {
	cmd.Flags().StringVarP(namespace, "namespace", "n", metav1.NamespaceDefault, "namespace")
	cmd.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) { //nolint:errcheck // the flag exists
		r, _ := resourceNamed("namespaces")
		return completeObjectNames(cmd, r, "")
	})
}

// selection is which objects of a kind a get or describe asks for.
type selection struct {
	namespace     string // ignored for kinds without a namespace
	allNamespaces bool
	selector      string
	names         []string
}

// check refuses what kubectl refuses.
func (s selection) check() error {
	if len(s.names) > 0 && s.selector != "" {
		return errors.New("name cannot be provided when a selector is specified")
	}
	if len(s.names) > 0 && s.allNamespaces {
		return errors.New("a resource cannot be retrieved by name across all namespaces")
	}
	return nil
}

// pick returns the objects of r (sorted as listed) that s selects, in
// the order of s.names when names are given, and, as kubectl does, the
// names not found as an error of their own (`pods "x" not found`): the
// found ones are printed first.
func (s selection) pick(r resource, objs []runtime.Object) (picked []runtime.Object, notFound error, err error) {
	if err := s.check(); err != nil {
		return nil, nil, err
	}
	sel, err := labels.Parse(s.selector)
	if err != nil {
		return nil, nil, fmt.Errorf("-l %q: %w", s.selector, err)
	}
	inScope := func(o metav1.Object) bool {
		return !r.namespaced || s.allNamespaces || o.GetNamespace() == s.namespace
	}
	if len(s.names) == 0 {
		var out []runtime.Object
		for _, o := range objs {
			m := o.(metav1.Object)
			if inScope(m) && sel.Matches(labels.Set(m.GetLabels())) {
				out = append(out, o)
			}
		}
		return out, nil, nil
	}
	var out []runtime.Object
	var missing []string
	for _, name := range s.names {
		found := false
		for _, o := range objs {
			if m := o.(metav1.Object); inScope(m) && m.GetName() == name {
				out, found = append(out, o), true
				break
			}
		}
		if !found {
			missing = append(missing, fmt.Sprintf("%s %q not found", r.plural, name))
		}
	}
	if len(missing) > 0 {
		return out, errors.New(strings.Join(missing, "; ")), nil
	}
	return out, nil, nil
}

// noResources is kubectl's message for an empty table.
func (s selection) noResources(r resource) string {
	if r.namespaced && !s.allNamespaces {
		return fmt.Sprintf("No resources found in %s namespace.", s.namespace)
	}
	return "No resources found"
}

// newGetResource is `svclab get KIND [NAME…]` for one kind of resources.
func newGetResource(r resource) *cobra.Command {
	var f getFlags
	cmd := &cobra.Command{
		Use:     r.plural + " [NAME…]",
		Aliases: r.aliases,
		Short:   fmt.Sprintf("List a lab's %s as kubectl get does (-o wide|json|yaml|name|jsonpath=…|custom-columns=…)", r.plural),
		Example: getResourceExample(r),
		RunE: func(cmd *cobra.Command, names []string) error {
			return runGet(cmd, f, []resource{r}, names)
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return completeObjectNames(cmd, r, toComplete)
		},
	}
	f.add(cmd, r.namespaced)
	return cmd
}

// getResourceExample is the Example of `get KIND`: its forms as kubectl's
// are typed.
func getResourceExample(r resource) string {
	lines := []string{"  sudo svclab get " + r.plural}
	if r.namespaced {
		lines = append(lines, "  sudo svclab get "+r.plural+" -A -o wide            # every namespace")
	} else {
		lines = append(lines, "  sudo svclab get "+r.plural+" -o wide")
	}
	lines = append(lines,
		"  sudo svclab get "+r.aliases[0]+" NAME -o yaml",
		"  sudo svclab get "+r.plural+" -o jsonpath='{.items[*].metadata.name}'",
		"  sudo svclab get "+r.plural+" -o custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp")
	return strings.Join(lines, "\n")
}

// getKinds is `get KIND[,KIND…] [NAME…]` for what no subcommand of get
// names: several kinds at once (get svc,pods), or an unknown kind.
func getKinds(cmd *cobra.Command, f getFlags, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	var kinds []resource
	for _, k := range strings.Split(args[0], ",") {
		r, ok := resourceNamed(k)
		if !ok {
			var known []string
			for _, r := range resources {
				known = append(known, r.plural)
			}
			return fmt.Errorf("the lab doesn't have a resource type %q (it has %s; and svclab's own labs, clusters, leftovers)", k, strings.Join(known, ", "))
		}
		kinds = append(kinds, r)
	}
	if len(kinds) > 1 && len(args) > 1 {
		return errors.New("names can be given with one resource type only")
	}
	return runGet(cmd, f, kinds, args[1:])
}

// runGet prints the objects of kinds that f and names select: kubectl get.
// Several kinds print one table each, their names prefixed with the kind,
// or one List.
func runGet(cmd *cobra.Command, f getFlags, kinds []resource, names []string) error {
	sel := selection{namespace: f.namespace, allNamespaces: f.allNamespaces, selector: f.selector, names: names}
	if err := kubeprint.CheckOutput(f.output); err != nil {
		return err
	}
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
	human := kubeprint.IsHuman(f.output)
	var all []runtime.Object
	var notFound []error
	printed := 0
	for _, r := range kinds {
		listed, err := r.listed(v)
		if err != nil {
			return err
		}
		picked, missing, err := sel.pick(r, listed)
		if err != nil {
			return err
		}
		if missing != nil {
			notFound = append(notFound, missing)
		}
		if !human {
			all = append(all, picked...)
			continue
		}
		if len(picked) == 0 {
			continue
		}
		if printed > 0 {
			fmt.Fprintln(cmd.OutOrStdout())
		}
		printed++
		opts := kubeprint.Options{
			Output: f.output, WithNamespace: r.namespaced && f.allNamespaces, NoHeaders: f.noHeaders,
			ShowLabels: f.showLabels, WithKind: len(kinds) > 1, Now: time.Now(),
		}
		if err := kubeprint.Print(cmd.OutOrStdout(), picked, opts); err != nil {
			return err
		}
	}
	if !human && (len(all) > 0 || len(notFound) == 0) {
		opts := kubeprint.Options{Output: f.output, Single: len(kinds) == 1 && len(names) == 1, NoHeaders: f.noHeaders, Now: time.Now()}
		if err := kubeprint.Print(cmd.OutOrStdout(), all, opts); err != nil {
			return err
		}
	}
	if human && printed == 0 && len(notFound) == 0 {
		msg := sel.noResources(kinds[0])
		for _, r := range kinds[1:] {
			if r.namespaced != kinds[0].namespaced {
				msg = "No resources found"
			}
		}
		fmt.Fprintln(cmd.ErrOrStderr(), msg)
	}
	for _, r := range kinds {
		if r.plural == "pods" {
			notePending(cmd, l)
		}
	}
	return errors.Join(notFound...)
}

// notePending says, on stderr, which pods a command is making or removing
// (or was, when it was killed): they may exist without being in the
// store, or be in it without existing yet.
func notePending(cmd *cobra.Command, l *netns.Lab) {
	op, making, removing, err := l.Pending()
	if err != nil || op == "" {
		return
	}
	var note []string
	for _, p := range making {
		note = append(note, p.Name+" (being created)")
	}
	for _, name := range removing {
		note = append(note, name+" (being deleted)")
	}
	if len(note) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "pending %s: %s: %s\n", op, netns.Interrupted(l.Name()), strings.Join(note, ", "))
	}
}
