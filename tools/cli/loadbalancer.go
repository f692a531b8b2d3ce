package cli

import (
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/kind/loadbalancer"
)

// newLoadBalancer is `svclab loadbalancer`: the load balancer of svclab's
// kind clusters, run by the svclab-loadbalancer Deployment.
func newLoadBalancer() *cobra.Command {
	var cmdline selfexec.LoadBalancer
	cmd := &cobra.Command{
		Use:    "loadbalancer --pool CIDR|FIRST-LAST",
		Short:  "Give LoadBalancer Services an address of the pool (runs inside a kind cluster)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return loadbalancer.Run(ctx, loadbalancer.Options{Pool: cmdline.Pool, Out: cmd.OutOrStdout()})
		},
	}
	cmdline.AddFlags(cmd.Flags())
	return cmd
}
