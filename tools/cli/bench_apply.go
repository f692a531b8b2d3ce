package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/tools/bench"
)

// newBenchApply is `svclab bench apply`: the whole path of one changed
// EndpointSlice, from apply to every proxy's acknowledgement, in labs of
// N Services.
func newBenchApply() *cobra.Command {
	var (
		services, modes, output string
		opts                    bench.ApplyOptions
	)
	cmd := &cobra.Command{
		Use:   "apply [--services N,…] [--modes MODE,…] [--applies K] [-o table|json]",
		Short: "Time `svclab apply` of one changed EndpointSlice in labs of N Services, split into the lab's store, the proxy and the acknowledgement",
		Long: "For every number of Services and every mode, builds a one-node lab of its own holding N generated ClusterIP " +
			"Services (as bench dataplane does) and one selector-less Service, then applies that Service's EndpointSlice " +
			"--applies times, each with another address, and reports the medians: the whole apply (it returns once every " +
			"proxy acknowledged the change: rules in the kernel), the lab's part before the proxies (lock, read, controllers, " +
			"journal, object files), the proxy's (from the stored change to its status after the sync) and the " +
			"acknowledgement's (from that status to the apply seeing it).",
		Example: "  sudo svclab bench apply --services 100,10000 --modes iptables,nftables",
		Args:    cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts.Services, opts.Modes, err = parseBenchLabFlags(services, modes, output); err != nil {
				return err
			}
			opts.Lab.Out = cmd.ErrOrStderr()
			runs, err := bench.RunApply(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				err = enc.Encode(runs)
			} else {
				err = writeApplyTable(cmd.OutOrStdout(), runs)
			}
			if err != nil {
				return err
			}
			for _, r := range runs {
				if r.Error != "" {
					return fmt.Errorf("bench apply: %s with %d Services failed: %s", r.Mode, r.Services, r.Error)
				}
			}
			return nil
		}),
	}
	f := cmd.Flags()
	f.StringVar(&services, "services", "100,10000", "numbers of Services in the lab, comma-separated")
	f.StringVar(&modes, "modes", "iptables,nftables", "modes to measure: iptables, iptables-legacy, iptables-nft, nftables, ipvs")
	f.IntVar(&opts.Applies, "applies", bench.DefaultApplies, "applies of the changed EndpointSlice per lab (the median is reported)")
	f.StringVarP(&output, "output", "o", "table", "table or json")
	f.DurationVar(&opts.Timeout, "timeout", 20*time.Minute, "stop after this long and report what was measured")
	return cmd
}

// writeApplyTable prints one row per lab: the medians in milliseconds.
func writeApplyTable(w io.Writer, runs []bench.ApplyRun) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MODE\tSERVICES\tAPPLIES\tTOTAL ms\tSTORE ms\tPROXY ms\tACK ms\tFINISH ms\tread\tchange\tjournal\tstore\t")
	for _, r := range runs {
		switch {
		case r.Skipped != "":
			fmt.Fprintf(tw, "%s\t%d\tskipped: %s\t\n", r.Mode, r.Services, r.Skipped)
		case r.Error != "":
			fmt.Fprintf(tw, "%s\t%d\terror: %s\t\n", r.Mode, r.Services, r.Error)
		default:
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", r.Mode, r.Services, r.Applies,
				r.TotalMs, r.StoreMs, r.ProxyMs, r.AckMs, r.FinishMs, r.Steps["read"], r.Steps["change"], r.Steps["journal"], r.Steps["store"])
		}
	}
	return tw.Flush()
}
