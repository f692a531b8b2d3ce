package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs"
	"github.com/svclab/svclab/labs/selfexec"
	"github.com/svclab/svclab/labs/traffic"
)

func newTraffic() *cobra.Command {
	var cmdline selfexec.Traffic
	opts := &cmdline.Options
	cmd := &cobra.Command{
		Use:   "traffic [--lab NAME --from HOST] --to IP:PORT -n N",
		Short: "Open N new TCP connections, ask each /hostname, and show how they spread over the backends",
		Long: "Makes N new TCP connections (bounded in parallelism, per-connection timeout and overall deadline), " +
			"sends GET /hostname on each, and prints per backend the count, the share, the expected share and a chi-square p-value. " +
			"With --lab and --from it runs inside that host of the lab (a client, node or pod).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			return res.Report().Write(cmd.OutOrStdout(), cmdline.Output)
		},
	}
	cmdline.AddFlags(cmd.Flags())
	return cmd
}

// trafficInLab runs the traffic inside a host of the lab.
func trafficInLab(labName, from string, opts traffic.Options) (*traffic.Result, error) {
	if labName == "" || from == "" {
		return nil, fmt.Errorf("--lab and --from go together")
	}
	l, err := labs.Open(labName)
	if err != nil {
		return nil, err
	}
	return l.Traffic(from, opts, labs.Options{})
}
