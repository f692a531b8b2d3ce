package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/internal/hostport"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/agents/traffic/bars"
	"github.com/svclab/svclab/labs/netns"
)

func newTraffic() *cobra.Command {
	var cmdline selfexec.Traffic
	opts := &cmdline.Options
	cmd := &cobra.Command{
		Use:   "traffic [--lab NAME] [--from HOST] --to IP:PORT [--protocol tcp|udp] [-c N] [--expect NAME=WEIGHT,…] [--alpha A] [-o table|json|bars|svg]",
		Short: "Open N new TCP connections (or UDP sockets), ask each /hostname, and test how they spread over the backends",
		Long: "Makes N (-c, --count) new TCP connections (bounded in parallelism, per-connection timeout and overall deadline), " +
			"sends GET /hostname on each, and prints per backend the count, the share, the expected share and a chi-square " +
			"goodness-of-fit p-value: against --expect (NAME or NAME=WEIGHT, shares in proportion to the weights), else " +
			"uniform over the backends that answered. It ends with the verdict and exits 1 when it fails: a p-value below " +
			"--alpha (default 1e-6, so a correct proxy fails once in 10^6 runs), or a connection that failed. " +
			"With --protocol udp each connection is a new UDP socket sending agnhost netexec's hostname command and waiting --timeout for the answer. " +
			"With --from it runs inside that host of the lab (a client, node or pod). " +
			"-o bars draws the split as bars against the expected shares (coloured on a terminal unless NO_COLOR is set), -o svg as an SVG picture.",
		Example: "  svclab traffic --from client --to 10.96.0.11:80 -c 3000 -o bars\n" +
			"  svclab traffic --from client --to [fd00:10:96::b]:80 -c 3000\n" +
			"  svclab traffic --from client --to 10.96.0.11:80 -c 3000 -o svg > split.svg",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkTrafficOutput(cmdline.Output); err != nil {
				return err
			}
			if _, _, err := hostport.Split(opts.Target); err != nil {
				return fmt.Errorf("--to %q: %w", opts.Target, err)
			}
			var res *traffic.Result
			var err error
			if cmdline.Lab != "" || cmdline.From != "" {
				res, err = trafficInLab(cmdline.Lab, cmdline.From, *opts)
			} else {
				res, err = traffic.Run(cmd.Context(), *opts)
			}
			if err != nil {
				return err
			}
			if cmdline.Raw {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
			}
			rep := res.Report()
			if err := writeTrafficReport(cmd.OutOrStdout(), rep, cmdline.Output); err != nil {
				return err
			}
			if !rep.Passed() {
				return fmt.Errorf("traffic to %s: %s", rep.Target, rep.VerdictReason)
			}
			return nil
		},
	}
	cmdline.AddFlags(cmd.Flags())
	cmd.MarkFlagRequired("to") //nolint:errcheck // the flag exists
	registerLabCompletion(cmd)
	cmd.RegisterFlagCompletionFunc("from", completeHosts)                                                                //nolint:errcheck // the flag exists
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(trafficOutputs, cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists

	protocols := cobra.FixedCompletions([]string{traffic.ProtocolTCP, traffic.ProtocolUDP}, cobra.ShellCompDirectiveNoFileComp)
	cmd.RegisterFlagCompletionFunc("protocol", protocols) //nolint:errcheck // the flag exists
	return cmd
}

// trafficOutputs are traffic's -o formats: the report's own (table, json)
// and the bars' (bars for a terminal, svg).
var trafficOutputs = []string{traffic.FormatTable, traffic.FormatJSON, "bars", "svg"}

// checkTrafficOutput refuses an unknown -o before any connection is made.
func checkTrafficOutput(format string) error {
	if format != "" && !slices.Contains(trafficOutputs, format) {
		return fmt.Errorf("-o %q: want one of %s", format, strings.Join(trafficOutputs, ", "))
	}
	return nil
}

// writeTrafficReport writes the report in format: bars (coloured when w is
// a terminal and NO_COLOR is unset), svg, or the report's table or json.
func writeTrafficReport(w io.Writer, rep traffic.Report, format string) error {
	switch format {
	case "bars":
		return bars.WriteText(w, rep, useColor(w))
	case "svg":
		return bars.WriteSVG(w, rep)
	}
	return rep.Write(w, format)
}

// trafficInLab runs the traffic inside a host of the lab (of the only lab
// when labName is empty).
func trafficInLab(labName, from string, opts traffic.Options) (*traffic.Result, error) {
	if from == "" {
		return nil, fmt.Errorf("--from: required with --lab (the lab host to connect from: a client, node or pod)")
	}
	l, err := openLab(labName)
	if err != nil {
		return nil, err
	}
	return l.Traffic(from, opts, netns.Options{})
}
