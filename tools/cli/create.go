package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/netns"
)

func newCreate() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a lab",
		Example: "  sudo svclab create lab --config clusters/single-node.yaml\n" +
			"  sudo svclab create cluster --config clusters/kind/calico-proxyarp.yaml --name demo --cni calico-proxyarp --proxy stock",
	}
	var config string
	lab := &cobra.Command{
		Use:   "lab --config FILE",
		Short: "Create a lab from a topology file (clusters/*.yaml)",
		Example: "  sudo svclab create lab --config clusters/single-node.yaml   # prints the bring-up time\n" +
			"  sudo svclab create lab --config clusters/nodeport.yaml",
		Args: cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				return fmt.Errorf("--config: required (a lab topology, e.g. clusters/single-node.yaml)")
			}
			l, took, err := netns.Create(cmd.Context(), config, netns.Options{Out: cmd.OutOrStdout()})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "lab %s is up in %s (%d nodes, %d clients, cni %s, proxy mode %s)\n",
				l.Name(), took.Round(1e6), len(l.Topology.Spec.Nodes), len(l.Topology.Spec.Clients), l.Topology.Spec.CNI, l.Topology.Spec.Proxy.Mode)
			return nil
		}),
	}
	lab.Flags().StringVar(&config, "config", "", "lab topology file")
	lab.MarkFlagRequired("config") //nolint:errcheck // the flag exists
	cmd.AddCommand(lab)
	return cmd
}
