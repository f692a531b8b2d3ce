package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/builtin"
)

func newCreate() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a lab",
		Example: "  sudo svclab create lab --config single-node\n" +
			"  sudo svclab create cluster --config calico-proxyarp --name demo --cni calico-proxyarp --proxy stock",
	}
	var config string
	lab := &cobra.Command{
		Use:   "lab --config FILE|NAME",
		Short: "Create a lab from a topology file, or a built-in one by name (svclab get examples)",
		Long: "Create a lab from a topology file (the format: clusters/README.md). A FILE that exists is read; otherwise " +
			"NAME is one of the lab files built into svclab (single-node, nodeport, service-types: the checkout's " +
			"clusters/NAME.yaml, so clusters/single-node.yaml works from any folder too).",
		Example: "  sudo svclab create lab --config single-node              # built in; prints the bring-up time\n" +
			"  sudo svclab create lab --config clusters/nodeport.yaml   # the checkout's file, or the built-in one elsewhere\n" +
			"  sudo svclab create lab --config ./my-lab.yaml",
		Args: cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				return fmt.Errorf("--config: required (a lab topology file, or a built-in one: single-node, nodeport, service-types)")
			}
			file, err := builtin.Resolve(config, builtin.Lab)
			if err != nil {
				return fmt.Errorf("--config %w", err)
			}
			l, took, err := netns.Create(cmd.Context(), file, netns.Options{Out: cmd.OutOrStdout()})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "lab %s is up in %s (%d nodes, %d clients, cni %s, proxy mode %s)\n",
				l.Name(), took.Round(1e6), len(l.Topology.Spec.Nodes), len(l.Topology.Spec.Clients), l.Topology.Spec.CNI, l.Topology.Spec.Proxy.Mode)
			return nil
		}),
	}
	lab.Flags().StringVar(&config, "config", "", "lab topology file, or a built-in one's name (svclab get examples)")
	lab.MarkFlagRequired("config") //nolint:errcheck // the flag exists
	cmd.AddCommand(lab)
	return cmd
}
