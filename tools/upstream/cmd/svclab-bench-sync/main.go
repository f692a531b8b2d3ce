// Command svclab-bench-sync is `svclab bench sync`'s measurement: svclab's
// proxy and upstream kube-proxy's proxier of the same mode, each against
// the real kernel of a network namespace of its own, fed the same objects
// in the same run, interleaved (package upstream, RunSyncBench). ipvs on a
// kernel without IPVS runs in svclab's VM (internal/vm): this program
// again, inside, whose result comes back as JSON. It links
// k8s.io/kubernetes, which the svclab binary must not: `make bench-sync`
// builds it next to svclab, and `svclab bench sync` runs it.
//
//	svclab-bench-sync --mode iptables|nftables|ipvs --services N --endpoints E [--changes K] [--full-resyncs F] [--iptables legacy|nft] [-o table|json]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/svclab/svclab/tools/upstream"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		os.Exit(worker(os.Args[2:]))
	}
	var (
		opts   upstream.SyncBenchOptions
		output string
		quiet  bool
	)
	flag.StringVar(&opts.Mode, "mode", upstream.ModeIPTables, "iptables, nftables or ipvs (in svclab's VM when this kernel has no IPVS)")
	flag.IntVar(&opts.Services, "services", 0, fmt.Sprintf("Services in the generated cluster (default %d; %d for ipvs, emulated in the VM)",
		upstream.DefaultSyncServices, upstream.DefaultIPVSSyncServices))
	flag.IntVar(&opts.Endpoints, "endpoints", 10, "endpoints per Service")
	flag.IntVar(&opts.Changes, "changes", 20, "changes of each kind timed (p50 and p95 over them)")
	flag.IntVar(&opts.FullResyncs, "full-resyncs", 3, "hourly full resyncs timed, nothing changed (a minute or more each at 10,000 Services)")
	flag.StringVar(&opts.IPTables, "iptables", "", "iptables mode's binaries for both sides: the host's (default), legacy or nft")
	flag.StringVar(&output, "o", "table", "table or json")
	flag.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	tableFrom := flag.String("table-from", "", "print the table of a run saved with -o json, and measure nothing")
	flag.Parse()
	if *tableFrom != "" {
		os.Exit(printTable(*tableFrom))
	}
	if output != "table" && output != "json" {
		fmt.Fprintf(os.Stderr, "-o %q: want table or json\n", output)
		os.Exit(2)
	}
	if opts.Services == 0 {
		opts.Services = upstream.DefaultSyncServicesFor(opts.Mode)
	}
	if !quiet {
		opts.Progress = os.Stderr
	}
	res, err := upstream.RunSyncBench(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench sync:", err)
		os.Exit(1)
	}
	if output == "json" {
		err = upstream.WriteSyncBenchJSON(os.Stdout, res)
	} else {
		err = upstream.WriteSyncBenchTable(os.Stdout, res)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench sync:", err)
		os.Exit(1)
	}
}

// worker is `svclab-bench-sync worker SIDE MODE SERVICES ENDPOINTS`, one
// side in the network namespace the coordinator made for it.
func worker(args []string) int {
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "worker: want SIDE MODE SERVICES ENDPOINTS")
		return 2
	}
	services, err1 := strconv.Atoi(args[2])
	endpoints, err2 := strconv.Atoi(args[3])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "worker: SERVICES and ENDPOINTS are numbers")
		return 2
	}
	if err := upstream.RunSyncWorker(args[0], args[1], services, endpoints, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "worker %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// printTable prints the table of the JSON result in file.
func printTable(file string) int {
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var res upstream.SyncBenchResult
	if err := json.Unmarshal(data, &res); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", file, err)
		return 1
	}
	if err := upstream.WriteSyncBenchTable(os.Stdout, &res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
