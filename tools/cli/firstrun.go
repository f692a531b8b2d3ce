package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// firstSteps is what `svclab` with no arguments shows before the usual
// help: the three things a new user does first — make a lab, put a Service
// in it, look at what the kernel does — and the two guided ways in. The
// lab file and the workload are built in (svclab get examples): the steps
// work from any folder.
const firstSteps = `Start here:
  1. make a lab:       sudo svclab create lab --config single-node
  2. apply a Service:  sudo svclab apply --lab single-node -f workloads/nginx.yaml
  3. look:             sudo svclab trace --lab single-node --from client --to 10.96.0.11:80
Or be led through it:  sudo svclab tour nodeport   (a lesson run at once, every step live)
                       svclab workshop list        (the lessons, one step at a time)
`

// showFirstSteps is the root command's Run: the first steps, then the
// usual help.
func showFirstSteps(cmd *cobra.Command, _ []string) error {
	fmt.Fprint(cmd.OutOrStdout(), firstSteps+"\n")
	return cmd.Help()
}
