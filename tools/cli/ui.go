package cli

import (
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/tools/ui"
)

// newUI is `svclab ui [--lab L] [--listen 127.0.0.1:PORT]`: the lab live on
// a local page, for a classroom projector.
func newUI() *cobra.Command {
	var labName, listen string
	cmd := &cobra.Command{
		Use:   "ui [--lab L] [--listen 127.0.0.1:PORT]",
		Short: "Show the lab live on a local web page: topology, Service chains with counters, the last trace, a traffic button",
		Long: "ui serves a self-contained page (nothing from the network) at http://127.0.0.1:PORT/ for a classroom projector: " +
			"the lab's topology, each node's Service chains with their packet counters (iptables-save -c, and ip6tables-save -c on an ipv6 or dual lab; ipvsadm --stats in IPVS mode), " +
			"refreshed every 2 seconds, the last `svclab trace` picture, and a button that sends a bounded traffic run from the lab's " +
			"client to a Service and draws the split as bars. It listens on 127.0.0.1 only, and shows the lab only to a browser that " +
			"opened the link it prints (http://127.0.0.1:PORT/#token=…: the page trades the token for a session cookie and takes it off " +
			"the address bar), so other users of the machine cannot. Ctrl-C stops it; the lab is left as it is.",
		Example: "  sudo svclab ui --lab single-node\n  sudo svclab ui --lab nodeport --listen 127.0.0.1:9000",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ui.CheckListen(listen); err != nil {
				return fmt.Errorf("--listen: %w", err)
			}
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if err := hostprog.Ensure(ctx, cmd.ErrOrStderr(), hostprog.IP, hostprog.IPTablesSave, hostprog.IPVSAdm); err != nil {
				return err
			}
			return ui.Serve(ctx, listen, &ui.LabSource{Lab: l}, func(s *ui.Server) {
				fmt.Fprintf(cmd.OutOrStdout(), "svclab ui: lab %s at %s (Ctrl-C stops it)\n"+
					"  The link carries the page's key: whoever opens it can send traffic in the lab as root; share it with no one else.\n",
					l.Name(), s.SessionURL())
			})
		},
	}
	addLabFlag(cmd, &labName)
	cmd.Flags().StringVar(&listen, "listen", ui.DefaultListen, "address to serve the page on: 127.0.0.1:PORT only")
	return cmd
}
