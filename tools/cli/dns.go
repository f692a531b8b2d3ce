package cli

import (
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/agents/clusterdns"
	"github.com/svclab/svclab/labs/agents/selfexec"
)

// newDNS is `svclab dns`, internal: the process of a lab's coredns pod.
func newDNS() *cobra.Command {
	var cmdline selfexec.DNS
	cmd := &cobra.Command{
		Use:    "dns --lab-dir DIR",
		Short:  "A lab's cluster DNS server (the coredns pod behind kube-system/kube-dns)",
		Long:   "Answers the Kubernetes DNS schema (A, SRV, PTR, CNAME, TXT dns-version) for the Services and EndpointSlices of the lab whose state directory is --lab-dir, over UDP and TCP, and follows every change of the lab. Names outside the cluster domain and the reverse zones are REFUSED: nothing is forwarded. A lab runs one in its coredns pod.",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return clusterdns.Serve(ctx, cmdline.Options)
		},
	}
	cmdline.AddFlags(cmd.Flags())
	return cmd
}
