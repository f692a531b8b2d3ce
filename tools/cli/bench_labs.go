package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/tools/bench/labsize"
)

// newBenchLabs is `svclab bench labs`: bring-up, memory, one change and
// delete of labs of growing size.
func newBenchLabs() *cobra.Command {
	var (
		nodes, output string
		floorGiB      float64
		opts          labsize.Options
	)
	cmd := &cobra.Command{
		Use:   "labs [--nodes N,…] [--pods-per-node P] [-o table|json] [--timeout D] [--memory-floor GiB]",
		Short: "Time the bring-up, one Service change and the delete of labs of N nodes × P pods, with their processes' memory",
		Long: "For every number of nodes, builds a netns lab of its own (flannel's VXLAN CNI), applies a Deployment of " +
			"nodes × pods-per-node pod servers behind one Service, and reports: the lab's create and the pods' apply (their " +
			"sum is the bring-up, and the time per pod), the number of the lab's processes and the sum of their PSS " +
			"(/proc/PID/smaps_rollup), one apply that changes the Service's port until every proxy has it, and the lab's " +
			"delete. The run stops by itself: after --timeout; before a size whose estimate (the previous size's memory per " +
			"node and pod) would leave less than --memory-floor available; and, while a lab is built, as soon as the " +
			"machine's available memory falls under the floor (the lab is rolled back and deleted).",
		Example: "  sudo svclab bench labs --nodes 10,50,100 --pods-per-node 10\n" +
			"  sudo svclab bench labs --nodes 10 --pods-per-node 100 -o json",
		Args: cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts.Nodes, err = labsize.ParseNodeCounts(nodes); err != nil {
				return err
			}
			if output != "table" && output != "json" {
				return fmt.Errorf("-o %q: want table or json", output)
			}
			if floorGiB <= 0 {
				return fmt.Errorf("--memory-floor %g: want a positive number of GiB", floorGiB)
			}
			opts.MemoryFloor = int64(floorGiB * (1 << 30))
			opts.Progress = cmd.ErrOrStderr()
			res, err := labsize.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if output == "json" {
				err = labsize.WriteJSON(cmd.OutOrStdout(), res)
			} else {
				err = labsize.WriteTable(cmd.OutOrStdout(), res)
			}
			if err != nil {
				return err
			}
			return labsize.Failed(res)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&nodes, "nodes", "10,50,100", "numbers of nodes to measure, comma-separated")
	f.IntVar(&opts.PodsPerNode, "pods-per-node", 10, "pods on every node")
	f.StringVarP(&output, "output", "o", "table", "table or json")
	f.DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "stop after this long and report what was measured")
	f.Float64Var(&floorGiB, "memory-floor", float64(labsize.DefaultMemoryFloor)/(1<<30), "GiB of available memory the run never goes below")
	return cmd
}
