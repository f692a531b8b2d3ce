package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/tools/bench"
	"github.com/svclab/svclab/tools/bench/report"
)

// newBenchTraffic is `svclab bench traffic`: connections per second
// through a ClusterIP and straight to its pod, and the client's own CPU.
func newBenchTraffic() *cobra.Command {
	var (
		modes, parallelism, output string
		opts                       bench.TrafficOptions
	)
	cmd := &cobra.Command{
		Use:   "traffic [--modes MODE,…] [--services N] [--connections N] [--parallelism P,…] [--repetitions R] [-o table|json] [--timeout D]",
		Short: "Measure new connections per second through a ClusterIP and straight to its pod, and the client's own CPU per connection, per mode",
		Long: "For every mode, builds a one-node lab of its own with one server pod, one client pod and --services ClusterIP Services whose " +
			"only endpoint is that server (the last one is measured), and runs svclab's traffic generator in the client pod (new TCP connections, each an " +
			"HTTP GET): --connections per run, at every --parallelism, to the cluster IP and to the server's pod IP (the same " +
			"server without any Service rule: the client's, the server's and the kernel's own cost), alternately, --repetitions " +
			"times, each run on an emptied conntrack table. It reports per mode and parallelism the connections per second, the " +
			"connect time's p50/p99 (dial to established), the client's CPU time per connection (the generator's rusage) and " +
			"how many CPUs it kept busy, each as median (min–max) over the repetitions; and the share of the time per " +
			"connection the Service's path adds (1 − the paired rate ratio). Each run is bounded by --connections and " +
			"--run-deadline, the whole benchmark by --timeout; the lab is deleted after each mode. In iptables mode the pod IP's " +
			"first packet walks the nat table's KUBE-SERVICES chain too (every new connection through the node does), so with " +
			"many --services the rules' cost shows in both columns; nftables' service-ips map is one lookup either way. Modes: iptables, " +
			"iptables-legacy, iptables-nft, nftables, ipvs (needs IPVS in the kernel: run under `svclab vm run` where the host " +
			"has none).",
		Example: "  sudo svclab bench traffic --modes iptables,nftables --connections 20000 --parallelism 1,2,4,8 --repetitions 3\n" +
			"  sudo svclab bench traffic --modes iptables,nftables --services 5000 --parallelism 1,4\n" +
			"  sudo svclab bench traffic --modes nftables --parallelism 1 --repetitions 5 -o json",
		Args: cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts.Modes, err = bench.ParseModes(modes); err != nil {
				return err
			}
			if opts.Parallelism, err = bench.ParseParallelism(parallelism); err != nil {
				return err
			}
			if output != "table" && output != "json" {
				return fmt.Errorf("-o %q: want table or json", output)
			}
			opts.Lab.Out = cmd.ErrOrStderr()
			res, err := bench.RunTraffic(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if output == "json" {
				err = report.WriteTrafficJSON(cmd.OutOrStdout(), res)
			} else {
				err = report.WriteTrafficTable(cmd.OutOrStdout(), res)
			}
			if err != nil {
				return err
			}
			return failedTrafficRuns(res)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&modes, "modes", "iptables,nftables,ipvs", "modes to measure: iptables, iptables-legacy, iptables-nft, nftables, ipvs")
	f.IntVar(&opts.Services, "services", 1, "ClusterIP Services in the lab, all to the one server: the last one is measured (late in iptables' KUBE-SERVICES chain)")
	f.StringVar(&parallelism, "parallelism", "1,2,4,8", "connections open at once, comma-separated: one row each")
	f.IntVar(&opts.Connections, "connections", bench.DefaultTrafficConnections, "new connections per run")
	f.IntVar(&opts.Repetitions, "repetitions", bench.DefaultRepetitions, "runs per mode, parallelism and target: the spread is over them")
	f.DurationVar(&opts.RunDeadline, "run-deadline", time.Minute, "bound of one run: connections not started by then are not made")
	f.DurationVar(&opts.Timeout, "timeout", 15*time.Minute, "stop after this long and report what was measured")
	f.StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

// failedTrafficRuns is an error when a measurement failed (a skipped mode
// is not one) or the timeout stopped the benchmark.
func failedTrafficRuns(res *report.TrafficResult) error {
	failed := 0
	for _, r := range res.Runs {
		if r.Error != "" && (res.Stopped == "" || !strings.HasPrefix(r.Error, res.Stopped)) {
			failed++
		}
	}
	switch {
	case failed > 0:
		return fmt.Errorf("bench traffic: %d of %d measurements failed (see the table)", failed, len(res.Runs))
	case res.Stopped != "":
		return fmt.Errorf("bench traffic: stopped early: %s", res.Stopped)
	}
	return nil
}
