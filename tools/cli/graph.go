package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/netns/graph"
)

// newGraph is `svclab graph [--lab L] [-o svg|dot|mermaid]`: the lab's
// topology as a picture, drawn from its network plan and the pods in its
// store. It reads the lab; it changes nothing.
func newGraph() *cobra.Command {
	var labName, output string
	cmd := &cobra.Command{
		Use:   "graph [--lab L] [-o " + strings.Join(graph.Formats(), "|") + "]",
		Short: "Draw the lab's topology: router, nodes, clients, pods, bridges, VXLAN devices and addresses",
		Long: "graph draws the lab's hosts (router, nodes, clients, pods) with their interfaces and addresses, the router's LAN bridges, " +
			"the nodes' pod bridges and VXLAN devices, and the links between them, as the lab's network plan builds them. " +
			"-o svg (the default) is a picture svclab lays out itself; dot is for Graphviz (dot -Tpng); mermaid is a flowchart for Markdown.",
		Example: "  svclab graph -o svg > lab.svg\n  svclab graph --lab nodeport -o dot | dot -Tpng > lab.png",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := graph.ParseFormat(output)
			if err != nil {
				return fmt.Errorf("-o: %w", err)
			}
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			objs, _, err := l.Store.ReadObjects()
			if err != nil {
				return fmt.Errorf("lab %s: %w", l.Name(), err)
			}
			g, err := graph.FromStore(l.Topology, objs)
			if err != nil {
				return fmt.Errorf("lab %s: %w", l.Name(), err)
			}
			return graph.Render(cmd.OutOrStdout(), g, format)
		},
	}
	addLabFlag(cmd, &labName)
	cmd.Flags().StringVarP(&output, "output", "o", string(graph.FormatSVG), "output format: "+strings.Join(graph.Formats(), ", "))
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(graph.Formats(), cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists
	return cmd
}
