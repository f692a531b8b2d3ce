package cli

import (
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/svclab/svclab/tools/builtin"
)

// exampleStatus is what `get examples` shows of a built-in file.
type exampleStatus struct {
	// Kind is "lab file", "kind cluster config" or "workload".
	Kind string `json:"kind"`
	// Path is the file in the checkout's clusters/ folder, which the
	// binary embeds.
	Path    string `json:"path"`
	About   string `json:"about,omitempty"`
	Command string `json:"command"`
}

// newGetExamples is `svclab get examples [NAME…]`: the lab files, kind
// cluster configs and workloads built into svclab, which create lab
// --config, create cluster --config and apply -f take by name from any
// folder (tools/builtin).
func newGetExamples() *cobra.Command {
	var out ownOutput
	cmd := &cobra.Command{
		Use:     "examples [NAME…]",
		Aliases: []string{"example"},
		Short:   "List the lab files, kind cluster configs and workloads built into svclab (usable by name from any folder)",
		Long: "The files of the checkout's clusters/ folder are built into svclab: create lab --config NAME, create cluster " +
			"--config NAME and apply -f workloads/NAME.yaml use them from any folder, unless a file of that path exists " +
			"(a real file always wins). -o wide shows the command that uses each.",
		Example: `  svclab get examples
  svclab get examples -o wide
  svclab get example nginx -o yaml
  svclab get examples -o jsonpath='{.items[*].status.path}'`,
		ValidArgsFunction: completeExampleNames,
		RunE: func(cmd *cobra.Command, names []string) error {
			if err := out.check(); err != nil {
				return err
			}
			all, err := builtin.List()
			if err != nil {
				return err
			}
			picked, notFound := pickExamples(all, names)
			if out.human() {
				if err := printExampleTable(cmd, picked, out, len(names) == 0); err != nil {
					return err
				}
				return notFound
			}
			if len(picked) > 0 || notFound == nil {
				objs := make([]runtime.Object, 0, len(picked))
				for _, e := range picked {
					objs = append(objs, newOwnObject("Example", e.Name, time.Time{}, exampleStatus{Kind: string(e.Kind), Path: e.Path, About: e.About, Command: e.Command()}))
				}
				if err := out.print(cmd.OutOrStdout(), objs, len(names) == 1 && len(objs) == 1); err != nil {
					return err
				}
			}
			return notFound
		},
	}
	out.add(cmd)
	return cmd
}

// pickExamples keeps the examples of the names asked for (all when none;
// a name may be a lab file's and a kind config's), in the order asked,
// and returns `examples "x" not found` for the others, as kubectl.
func pickExamples(all []builtin.Example, asked []string) ([]builtin.Example, error) {
	if len(asked) == 0 {
		return all, nil
	}
	var names []string
	for _, e := range all {
		names = append(names, e.Name)
	}
	found, notFound := pickNames(slices.Compact(slices.Sorted(slices.Values(names))), asked, "examples")
	var out []builtin.Example
	for _, n := range found {
		for _, e := range all {
			if e.Name == n {
				out = append(out, e)
			}
		}
	}
	return out, notFound
}

// printExampleTable is get examples' table; -o wide adds the command.
// all: every example was asked for (none found says so, as kubectl).
func printExampleTable(cmd *cobra.Command, examples []builtin.Example, out ownOutput, all bool) error {
	if len(examples) == 0 {
		if all {
			fmt.Fprintln(cmd.ErrOrStderr(), "No resources found")
		}
		return nil
	}
	wide := out.output == "wide"
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	if !out.noHeaders {
		if wide {
			fmt.Fprintln(w, "KIND\tNAME\tCOMMAND\tABOUT")
		} else {
			fmt.Fprintln(w, "KIND\tNAME\tABOUT")
		}
	}
	for _, e := range examples {
		if wide {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", e.Kind, e.Name, e.Command(), e.About)
		} else {
			fmt.Fprintf(w, "%s\t%s\t%s\n", e.Kind, e.Name, e.About)
		}
	}
	return w.Flush()
}

// completeExampleNames completes the built-in examples' names.
func completeExampleNames(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	all, err := builtin.List()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, e := range all {
		names = append(names, e.Name)
	}
	return prefixed(slices.Compact(slices.Sorted(slices.Values(names))), toComplete), cobra.ShellCompDirectiveNoFileComp
}
