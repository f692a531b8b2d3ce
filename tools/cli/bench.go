package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/tools/bench"
	"github.com/svclab/svclab/tools/bench/report"
)

// newBench is `svclab bench`: measurements on labs and network namespaces
// of its own.
func newBench() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the proxy's syncs, the data plane, applies, lab bring-up and traffic, on labs of its own",
		Example: "  sudo svclab bench dataplane --services 100,2000 --modes iptables,nftables --svg plot.svg\n" +
			"  sudo svclab bench sync --mode nftables --services 1000 --endpoints 10\n" +
			"  sudo svclab bench labs --nodes 10,50 --pods-per-node 10",
	}
	cmd.AddCommand(newBenchDataplane())
	cmd.AddCommand(newBenchApply())
	cmd.AddCommand(newBenchLabs())
	cmd.AddCommand(newBenchSync())
	cmd.AddCommand(newBenchTraffic())
	return cmd
}

func newBenchDataplane() *cobra.Command {
	var (
		services, modes, output, svgFile string
		opts                             bench.Options
	)
	cmd := &cobra.Command{
		Use:   "dataplane [--services N,…] [--modes MODE,…] [-o table|json] [--svg FILE] [--timeout D]",
		Short: "Time how long N Services take to reach the kernel, the first packet's connect time, and the proxy's CPU, per mode",
		Long: "For every number of Services and every mode, builds a one-node lab of its own, applies N ClusterIP Services " +
			"whose endpoints are two real pod servers, and measures: the programming time (apply → the last Service's rule " +
			"seen in the node's kernel by iptables -S, nft get element or ipvsadm -Ln; split into the lab's store write and " +
			"the proxy's part), the TCP connect time of --connections fresh connections from a client pod to the first and " +
			"the last Service (p50/p99), and the CPU time of the node's proxy and its children (/proc/PID/stat). The lab is " +
			"deleted after each measurement. Modes: iptables (the host's iptables), iptables-legacy, iptables-nft, nftables " +
			"(switched on through the kube-proxy ConfigMap), ipvs (needs IPVS in the kernel: run under `svclab vm run` where " +
			"the host has none). After --timeout it stops and reports what it has. Each row's notes say what dominates it.",
		Example: "  sudo svclab bench dataplane --services 100,2000 --modes iptables,nftables -o json\n" +
			"  sudo svclab bench dataplane --services 100,1000,5000 --modes iptables-legacy,iptables-nft --svg bench.svg",
		Args: cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts.Services, opts.Modes, err = parseBenchLabFlags(services, modes, output); err != nil {
				return err
			}
			opts.Lab.Out = cmd.ErrOrStderr()
			res, err := bench.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if svgFile != "" {
				if err := writeSVGFile(svgFile, res); err != nil {
					return err
				}
			}
			if output == "json" {
				err = report.WriteJSON(cmd.OutOrStdout(), res)
			} else {
				err = report.WriteTable(cmd.OutOrStdout(), res)
			}
			if err != nil {
				return err
			}
			return failedRuns(res)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&services, "services", "100,1000,5000,10000", "numbers of Services to measure, comma-separated")
	f.StringVar(&modes, "modes", "iptables-legacy,iptables-nft,nftables,ipvs", "modes to measure: iptables, iptables-legacy, iptables-nft, nftables, ipvs")
	f.StringVarP(&output, "output", "o", "table", "table or json")
	f.StringVar(&svgFile, "svg", "", "also draw programming time and p99 connect latency against N into this SVG file")
	f.DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "stop after this long and report what was measured")
	f.IntVar(&opts.Connections, "connections", bench.DefaultConnections, "fresh TCP connections per Service measured")
	return cmd
}

func writeSVGFile(path string, res *report.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	if err := report.WriteSVG(f, res); err != nil {
		f.Close()
		return fmt.Errorf("--svg %s: %w", path, err)
	}
	return f.Close()
}

// failedRuns is an error when a measurement failed (a skipped mode is
// not one) or the timeout stopped the benchmark.
func failedRuns(res *report.Result) error {
	failed := 0
	for _, r := range res.Runs {
		if r.Error != "" && (res.Stopped == "" || !strings.HasPrefix(r.Error, res.Stopped)) {
			failed++ // not the measurement the timeout or an interrupt cut short
		}
	}
	switch {
	case failed > 0:
		return fmt.Errorf("bench dataplane: %d of %d measurements failed (see the table)", failed, len(res.Runs))
	case res.Stopped != "":
		return fmt.Errorf("bench dataplane: stopped early: %s", res.Stopped)
	}
	return nil
}

// parseBenchLabFlags reads the flags the benchmarks on labs of N Services
// share: --services, --modes and -o (table or json).
func parseBenchLabFlags(services, modes, output string) ([]int, []bench.Mode, error) {
	counts, err := bench.ParseServiceCounts(services)
	if err != nil {
		return nil, nil, err
	}
	ms, err := bench.ParseModes(modes)
	if err != nil {
		return nil, nil, err
	}
	if output != "table" && output != "json" {
		return nil, nil, fmt.Errorf("-o %q: want table or json", output)
	}
	return counts, ms, nil
}
