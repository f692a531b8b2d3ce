package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/labs"
)

// newGetLeftovers lists what interrupted svclab commands left on the host
// (svclab's policy-rc.d of a killed package install: hostprog.HostLeftovers),
// then, per node, the state the other proxy modes left: between iptables
// and ipvs a proxy does not clean the other mode's state when it starts
// (upstream since 1.15); to or from nftables it does, as upstream's
// platformCleanup; `svclab proxy --cleanup` removes all. Without a lab
// (none given, none there) it lists the host's only.
func newGetLeftovers() *cobra.Command {
	var labName string
	var all bool
	cmd := &cobra.Command{
		Use:   "leftovers --lab NAME [--all]",
		Short: "What an interrupted svclab left on the host (policy-rc.d), and per node what the other proxy modes left behind (KUBE-SVC chains, IPVS virtual servers, kube-ipvs0, ipsets, nftables table kube-proxy)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, err := hostprog.HostLeftovers()
			if err != nil {
				return err
			}
			if len(host) > 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "host, left by an interrupted svclab:")
				for _, h := range host {
					fmt.Fprintf(cmd.OutOrStdout(), "  %s: %s\n", h.Path, h.What)
				}
				if labName == "" {
					if names, err := labs.List(); err == nil && len(names) == 0 {
						return nil
					}
				}
			}
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
