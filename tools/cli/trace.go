package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/internal/hostport"
	"github.com/svclab/svclab/labs/netns/trace"
)

// newTrace is `svclab trace --lab L --from HOST --to IP:PORT [--proto
// tcp|udp] [-o text|json|svg]`: one real connection and its path through
// the lab, from the kernel, in either family (--to [fd00:10:96::a]:80). It also keeps the result as the lab's last
// trace (last-trace.json and last-trace.svg in the lab's store).
func newTrace() *cobra.Command {
	var labName, from, to, proto, output string
	cmd := &cobra.Command{
		Use:   "trace [--lab L] --from HOST --to IP:PORT [--proto tcp|udp] [-o " + strings.Join(trace.Formats(), "|") + "]",
		Short: "Open one connection from a lab host and show its path: namespaces, matched rules, NAT, routes, VXLAN, conntrack",
		Long: "trace opens one real connection from HOST (a client, node or pod) to IP:PORT and shows each namespace the packet crossed, " +
			"the netfilter rules it matched in each node (the rules whose packet counters grew between `iptables-save -c` before and after, " +
			"so run it on an otherwise idle lab), the DNAT and SNAT rewrites and the conntrack entry it left on each node, " +
			"the routes and neighbours used (`ip route get` in each namespace), the VXLAN hop and its remote VTEP, and in IPVS mode the real server. " +
			"To an IPv6 address ([fd00:10:96::a]:80) it reads the same in that family: ip6tables-save -c, the IPv6 conntrack entries, `ip -6 route get`. " +
			"The KUBE-SEP chain named as confirmed is the one whose DNAT target is the endpoint in conntrack's reply tuple. " +
			"The result is also kept as the lab's last trace for `svclab ui`.",
		Example: "  svclab trace --lab nodeport --from client --to 192.168.16.73:30000\n" +
			"  svclab trace --lab nodeport --from client --to 192.168.16.73:30000 -o svg > trace.svg\n" +
			"  svclab trace --lab dual --from client --to [fd00:10:96::b]:80",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := trace.ParseFormat(output)
			if err != nil {
				return fmt.Errorf("-o: %w", err)
			}
			if from == "" {
				return fmt.Errorf("--from: required (a client, node or pod of the lab)")
			}
			dst, err := hostport.ParseAddrPort(to)
			if err != nil {
				return fmt.Errorf("--to %q: %w", to, err)
			}
			if proto != "tcp" && proto != "udp" {
				return fmt.Errorf("--proto %q: want tcp or udp", proto)
			}
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			res, err := trace.Trace(cmd.Context(), l, from, dst, trace.Options{Proto: proto})
			if err != nil {
				return err
			}
			if err := trace.SaveLast(l.Store, res); err != nil {
				return err
			}
			return trace.Render(cmd.OutOrStdout(), res, format)
		},
	}
	addLabFlag(cmd, &labName)
	cmd.Flags().StringVar(&from, "from", "", "lab host that opens the connection: a client, node or pod")
	cmd.Flags().StringVar(&to, "to", "", "destination IP:PORT, an IPv6 address in brackets: [fd00:10:96::a]:80")
	cmd.Flags().StringVar(&proto, "proto", "tcp", "tcp or udp")
	cmd.Flags().StringVarP(&output, "output", "o", string(trace.FormatText), "output format: "+strings.Join(trace.Formats(), ", "))
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(trace.Formats(), cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists
	return cmd
}
