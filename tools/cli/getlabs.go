package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/svclab/svclab/labs/netns"
)

// newGetLabs is `svclab get labs [NAME…]` (or `get lab`): svclab's own
// table, or Lab objects for -o json|yaml|name|jsonpath|custom-columns.
func newGetLabs() *cobra.Command {
	var out ownOutput
	cmd := &cobra.Command{
		Use:     "labs [NAME…]",
		Aliases: []string{"lab"},
		Short:   "List labs (also those only the kernel still knows of)",
		Example: `  sudo svclab get labs
  sudo svclab get lab single-node -o yaml
  sudo svclab get labs -o jsonpath='{.items[*].metadata.name}'
  sudo svclab get labs -o custom-columns=NAME:.metadata.name,STATE:.status.state`,
		ValidArgsFunction: completeLabNames,
		RunE: func(cmd *cobra.Command, names []string) error {
			if err := out.check(); err != nil {
				return err
			}
			all, err := netns.List()
			if err != nil {
				return err
			}
			picked, notFound := pickNames(all, names, "labs")
			rows := make([]labRow, 0, len(picked))
			for _, n := range picked {
				rows = append(rows, readLabRow(n))
			}
			if out.human() {
				if err := printLabTable(cmd, rows, out); err != nil {
					return err
				}
				return notFound
			}
			if len(rows) > 0 || notFound == nil {
				objs := make([]runtime.Object, 0, len(rows))
				for _, r := range rows {
					objs = append(objs, r.object())
				}
				if err := out.print(cmd.OutOrStdout(), objs, len(names) == 1); err != nil {
					return err
				}
			}
			return notFound
		},
	}
	out.add(cmd)
	return cmd
}

// labRow is what get labs knows of one lab: all of it when the lab opens,
// its name and state only when it does not (interrupted, or broken).
type labRow struct {
	name    string
	opened  bool
	cni     string
	nodes   []string
	pods    *int
	proxy   string
	state   string
	created time.Time
}

// readLabRow reads the lab called name.
func readLabRow(name string) labRow {
	l, err := netns.Open(name)
	if err != nil && netns.Interrupted(name) != "" {
		return labRow{name: name, state: netns.Interrupted(name)}
	}
	if err != nil {
		return labRow{name: name, state: fmt.Sprintf("broken (no state; svclab delete lab --name %s)", name)}
	}
	r := labRow{name: name, opened: true, cni: string(l.Topology.Spec.CNI), proxy: l.ProxyKernel(), state: l.Health(), created: l.Created()}
	for _, n := range l.Topology.Spec.Nodes {
		r.nodes = append(r.nodes, n.Name)
	}
	if objs, _, err := l.Store.ReadObjects(); err == nil {
		n := len(objs.Pods)
		r.pods = &n
	}
	return r
}

// printLabTable is get labs' table; -o wide adds AGE and the node names.
func printLabTable(cmd *cobra.Command, rows []labRow, out ownOutput) error {
	wide := out.output == "wide"
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	if !out.noHeaders {
		fmt.Fprint(w, "NAME\tCNI\tNODES\tPODS\tPROXY\tSTATUS")
		if wide {
			fmt.Fprint(w, "\tAGE\tNODE-NAMES")
		}
		fmt.Fprintln(w)
	}
	for _, r := range rows {
		cells := []string{r.name, "-", "-", "-", "-", r.state}
		if r.opened {
			pods := "-"
			if r.pods != nil {
				pods = fmt.Sprint(*r.pods)
			}
			cells = []string{r.name, r.cni, fmt.Sprint(len(r.nodes)), pods, r.proxy, r.state}
		}
		if wide {
			age, nodes := "<unknown>", "-"
			if !r.created.IsZero() {
				age = duration.HumanDuration(time.Since(r.created))
			}
			if len(r.nodes) > 0 {
				nodes = strings.Join(r.nodes, ",")
			}
			cells = append(cells, age, nodes)
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	return w.Flush()
}

// object is the lab as a svclab.dev/v1alpha1 Lab.
func (r labRow) object() runtime.Object {
	return newOwnObject("Lab", r.name, r.created, labStatus{CNI: r.cni, Nodes: r.nodes, Pods: r.pods, Proxy: r.proxy, State: r.state})
}
