package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs"
)

func newGet() *cobra.Command {
	var f getFlags
	cmd := &cobra.Command{
		Use:   "get KIND[,KIND…] [NAME…]",
		Short: "List labs, clusters, and a lab's objects as kubectl get does",
		RunE: func(cmd *cobra.Command, args []string) error {
			return getKinds(cmd, f, args)
		},
	}
	f.add(cmd, true)
	cmd.AddCommand(&cobra.Command{
		Use:   "labs",
		Short: "List labs (also those only the kernel still knows of)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names, err := labs.List()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tCNI\tNODES\tPODS\tPROXY\tSTATUS")
			for _, n := range names {
				l, err := labs.Open(n)
				if err != nil && labs.Interrupted(n) != "" {
					fmt.Fprintf(w, "%s\t-\t-\t-\t-\t%s\n", n, labs.Interrupted(n))
					continue
				}
				if err != nil {
					fmt.Fprintf(w, "%s\t-\t-\t-\t-\tbroken (no state; svclab delete lab --name %s)\n", n, n)
					continue
				}
				objs, _, err := l.Store.ReadObjects()
				pods := "-"
				if err == nil {
					pods = fmt.Sprint(len(objs.Pods))
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", n, l.Topology.Spec.CNI, len(l.Topology.Spec.Nodes), pods, l.ProxyKernel(), l.Health())
			}
			return w.Flush()
		},
	})
	for _, r := range resources {
		cmd.AddCommand(newGetResource(r))
	}
	cmd.AddCommand(newGetLeftovers())
	return cmd
}
