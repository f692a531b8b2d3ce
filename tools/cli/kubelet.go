package cli

import (
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/agents/kubelet"
	"github.com/svclab/svclab/labs/agents/selfexec"
)

func newKubelet() *cobra.Command {
	var cmdline selfexec.Kubelet
	cmd := &cobra.Command{
		Use:    "kubelet --lab-dir DIR --node NODE",
		Short:  "Run the servers of a lab node's pods, each on sockets in its pod's network namespace",
		Long:   "A lab starts one per node, in the node's network namespace, under a supervisor. It runs the agnhost-netexec-compatible server of every pod of the node that the lab's store has a spec for, with the pod's log and status, and answers the lab's syncs on the abstract socket @svclab-kubelet of the node's namespace.",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmdline.LabDir == "" || cmdline.Node == "" {
				return fmt.Errorf("--lab-dir and --node: required")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return kubelet.Run(ctx, labstore.OpenDir(cmdline.LabDir), cmdline.Node, cmd.ErrOrStderr())
		},
	}
	cmdline.AddFlags(cmd.Flags())
	return cmd
}
