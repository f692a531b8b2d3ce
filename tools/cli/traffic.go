package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs"
	"github.com/svclab/svclab/labs/traffic"
)

func newTraffic() *cobra.Command {
	var (
		labName, from, output string
		opts                  traffic.Options
		raw                   bool
	)
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
			if labName != "" || from != "" {
				res, err = trafficInLab(labName, from, opts)
			} else {
				res, err = traffic.Run(cmd.Context(), opts)
			}
			if err != nil {
				return err
			}
			if raw {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
			}
			return res.Report().Write(cmd.OutOrStdout(), output)
		},
	}
	f := cmd.Flags()
	f.StringVar(&labName, "lab", "", "lab name (with --from)")
	f.StringVar(&from, "from", "", "the lab host to connect from: a client, node or pod")
	f.StringVar(&opts.Target, "to", "", "IP:PORT to connect to (a ClusterIP:port or nodeIP:nodePort)")
	f.IntVarP(&opts.Connections, "connections", "n", 100, "number of new connections")
	f.IntVar(&opts.Parallelism, "parallel", traffic.DefaultParallelism, "connections open at once")
	f.DurationVar(&opts.Timeout, "timeout", traffic.DefaultTimeout, "timeout of one connection")
	f.DurationVar(&opts.Deadline, "deadline", traffic.DefaultDeadline, "deadline of the whole run")
	f.StringVar(&opts.Path, "path", traffic.DefaultPath, "HTTP path to GET")
	f.StringSliceVar(&opts.Expected, "expect", nil, "backends that should share the traffic equally (default: those that answered)")
	f.StringVarP(&output, "output", "o", "table", "output format: table or json")
	f.BoolVar(&raw, "raw", false, "print the whole result, every connection included, as JSON")
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
