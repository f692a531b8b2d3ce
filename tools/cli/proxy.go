package cli

import (
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/proxy"
)

func newProxy() *cobra.Command {
	var cmdline selfexec.Proxy
	opts := &cmdline.Options
	cmd := &cobra.Command{
		Use:   "proxy (--lab-dir DIR --node NAME | --kubeconfig FILE --hostname-override NAME) [--config FILE]",
		Short: "Run the embedded kube-proxy (a lab starts one per node)",
		// Internal: a lab runs it (svclab runs itself); not for the user's help.
		Hidden: true,
		Long: "Runs svclab's kube-proxy: watches Services and EndpointSlices (a lab's store, or a cluster's API server) " +
			"and programs the kernel in the configured mode: iptables rules with one iptables-restore per sync, IPVS, or one nftables transaction per sync. Serves /proxyMode and /metrics on the " +
			"metricsBindAddress (default 127.0.0.1:10249) and /healthz on the healthzBindAddress (default 0.0.0.0:10256).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmdline.Cleanup {
				if err := proxy.Cleanup(opts.IPTablesBackend); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "removed what kube-proxy's iptables, ipvs and nftables modes made in this network namespace")
				return nil
			}
			if opts.LabDir != "" && opts.NodeName == "" {
				return fmt.Errorf("--node: required with --lab-dir")
			}
			if opts.LabDir == "" && opts.NodeName == "" {
				opts.NodeName = hostname()
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return proxy.Run(ctx, *opts)
		},
	}
	cmdline.AddFlags(cmd.Flags())
	return cmd
}
