package cli

import (
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/agents/netexec"
	"github.com/svclab/svclab/labs/agents/selfexec"
)

func newNetexec() *cobra.Command {
	var cmdline selfexec.Netexec
	opts := &cmdline.Options
	cmd := &cobra.Command{
		Use:   "netexec --pod-name NAME --http-port PORT…",
		Short: "The pods' backend server (agnhost netexec compatible: /hostname, /clientip, /)",
		// Internal: a lab runs it (svclab runs itself); not for the user's help.
		Hidden: true,
		Long:   "Serves GET /hostname (the pod name), /clientip (the peer's ip:port as seen here), / (JSON: pod, node, pod IPs, client) and /healthz on every --http-port, and answers the UDP datagrams hostname, echo MSG and clientip on every --udp-port (default 8081; -1 for none). A lab runs one in every pod.",
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if len(opts.Ports) == 0 {
				opts.Ports = []int{8080} // agnhost netexec's default --http-port
			}
			opts.UDPPorts = udpPorts(opts.UDPPorts)
			return netexec.Serve(ctx, *opts)
		},
	}
	cmdline.AddFlags(cmd.Flags())
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if opts.PodName == "" {
			opts.PodName = hostname()
		}
		return nil
	}
	return cmd
}

// udpPorts are the UDP ports --udp-port asks for: agnhost netexec's
// default 8081 when the flag is not given, none for -1.
func udpPorts(flag []int) []int {
	if len(flag) == 0 {
		return []int{netexec.DefaultUDPPort}
	}
	var ports []int
	for _, p := range flag {
		if p != netexec.NoUDPPort {
			ports = append(ports, p)
		}
	}
	return ports
}
