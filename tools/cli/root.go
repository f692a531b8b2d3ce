package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Main runs the CLI with args and returns the exit code.
func Main(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		if code, ok := err.(exitCode); ok {
			return int(code)
		}
		fmt.Fprintln(os.Stderr, "error:", err)
		var stopped interruptedError
		if errors.As(err, &stopped) {
			return stopped.code()
		}
		return 1
	}
	return 0
}

// exitCode passes a child's exit status through (svclab exec).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "svclab",
		Short:         "A lab and test harness for Kubernetes Service networking",
		Long:          "svclab shows what kube-proxy does to a packet: it builds labs from network namespaces, runs an embedded kube-proxy in them, and proves what the kernel did.",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Arbitrary arguments to the root are unknown commands (cobra's
		// legacy check), as before it had a RunE of its own.
		RunE:              showFirstSteps,
		PersistentPreRunE: requireRoot,
	}
	create, get, del := newCreate(), newGet(), newDelete()
	create.AddCommand(newCreateCluster())
	get.AddCommand(newGetClusters())
	del.AddCommand(newDeleteCluster())
	root.AddCommand(create, get, del, newDescribe(), newLogs(), newVersion(), newApply(), newExec(), newTraffic(), newProxy(), newNetexec(), newDNS(), newTour(), newEdit(), newVM(), newKind(), newCNI(), newLoadBalancer(), newNode(), newConformance(), newSupervise(), newKubelet(), newGraph(), newTrace(), newUI(), newWorkshop(), newBench())
	root.AddCommand(newImage())
	root.AddCommand(newLookup())
	if err := registerFlagCompletions(root); err != nil {
		panic("svclab: flag completions: " + err.Error()) // a command or flag was renamed: every test says so
	}
	return root
}
