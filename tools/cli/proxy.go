package cli

import (
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/proxy"
)

func newProxy() *cobra.Command {
	var opts proxy.Options
	var cleanup bool
	cmd := &cobra.Command{
		Use:   "proxy (--lab-dir DIR --node NAME | --kubeconfig FILE --hostname-override NAME) [--config FILE]",
		Short: "Run the embedded kube-proxy (a lab starts one per node)",
		Long: "Runs svclab's kube-proxy: watches Services and EndpointSlices (a lab's store, or a cluster's API server) " +
			"and writes iptables rules with one iptables-restore per sync. Serves /proxyMode and /metrics on the " +
			"metricsBindAddress (default :10249) and /healthz on the healthzBindAddress (:10256).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cleanup {
				if err := proxy.Cleanup(opts.IPTablesBackend); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "removed what kube-proxy's iptables and ipvs modes made in this network namespace")
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
			return proxy.Run(ctx, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.LabDir, "lab-dir", "", "a lab's state directory (lab mode)")
	f.StringVar(&opts.NodeName, "node", "", "this node's name")
	f.StringVar(&opts.NodeName, "hostname-override", "", "this node's name (kube-proxy's flag)")
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "kubeconfig of a cluster (cluster mode; in-cluster config when empty)")
	f.StringVar(&opts.ConfigFile, "config", "", "KubeProxyConfiguration file (default: the kube-system/kube-proxy ConfigMap)")
	f.BoolVar(&cleanup, "cleanup", false, "remove what kube-proxy's modes made (chains, IPVS services, kube-ipvs0, ipsets) and exit, like kube-proxy --cleanup")
	f.StringVar(&opts.IPTablesBackend, "iptables-backend", "", "iptables backend: legacy or nft (default: the host's iptables)")
	return cmd
}
