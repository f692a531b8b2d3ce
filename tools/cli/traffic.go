package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs"
	"github.com/svclab/svclab/tools/traffic"
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
				res, err = trafficInLab(cmd, labName, from, opts)
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

// trafficInLab runs this command again inside the lab host's namespace and
// reads its raw result: sockets belong to the namespace of the thread that
// makes them, and a process of its own is the simple, safe way to get that.
func trafficInLab(cmd *cobra.Command, labName, from string, opts traffic.Options) (*traffic.Result, error) {
	if labName == "" || from == "" {
		return nil, fmt.Errorf("--lab and --from go together")
	}
	l, err := labs.Open(labName)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{self, "traffic", "--raw", "--to", opts.Target, "-n", strconv.Itoa(opts.Connections),
		"--parallel", strconv.Itoa(opts.Parallelism), "--timeout", opts.Timeout.String(),
		"--deadline", opts.Deadline.String(), "--path", opts.Path}
	for _, e := range opts.Expected {
		args = append(args, "--expect", e)
	}
	c, err := l.Command(from, args...)
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("traffic from %s: %v: %s", from, err, bytes.TrimSpace(errOut.Bytes()))
	}
	var res traffic.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("traffic from %s: reading result: %w", from, err)
	}
	return &res, nil
}
