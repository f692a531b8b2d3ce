package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// newGetLeftovers lists, per node, the state the other proxy modes left:
// between iptables and ipvs a proxy does not clean the other mode's state
// when it starts (upstream since 1.15); to or from nftables it does, as
// upstream's platformCleanup; `svclab proxy --cleanup` removes all.
func newGetLeftovers() *cobra.Command {
	var labName string
	var all bool
	cmd := &cobra.Command{
		Use:   "leftovers --lab NAME [--all]",
		Short: "Per node, what the other proxy modes left behind (KUBE-SVC chains, IPVS virtual servers, kube-ipvs0, ipsets, nftables table kube-proxy)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			for _, n := range l.Topology.Spec.Nodes {
				left, mode, err := l.Leftovers(n.Name)
				if err != nil {
					return err
				}
				what := "left by the other mode"
				if !all {
					left = left.ForeignTo(mode)
				} else {
					what = "made by kube-proxy (all modes)"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s (proxy mode %s), %s:\n", n.Name, mode, what)
				for _, line := range strings.Split(strings.TrimRight(left.String(), "\n"), "\n") {
					fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", line)
				}
			}
			return nil
		},
	}
	addLabFlag(cmd, &labName)
	cmd.Flags().BoolVar(&all, "all", false, "list the current mode's state too")
	return cmd
}
