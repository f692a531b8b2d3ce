package cli

import (
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/agents/selfexec"
)

func newSupervise() *cobra.Command {
	var cmdline selfexec.Supervise
	cmd := &cobra.Command{
		Use:    "supervise --lab-dir DIR --pod NAME [--namespace NS] [--node NODE] [--log FILE] -- ARGV…",
		Short:  "Run a lab's process as the kubelet runs a container: restarted with back-off, its status in the lab's store",
		Long:   "A lab starts one supervisor per node proxy and per pod server, in its network namespace. It runs ARGV, restarts it whenever it exits (at once the first time, then after 10s doubling to 5m, reset after 10m of running, as the kubelet does) and records its state, restarts and last exit in the lab's store, where svclab get pods reads them.",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmdline.LabDir == "" || cmdline.Pod == "" {
				return fmt.Errorf("--lab-dir and --pod: required")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			store := labstore.OpenDir(cmdline.LabDir)
			return process.Supervise(ctx, process.SuperviseSpec{
				Store: store,
				StopDeadline: func() (time.Time, bool) {
					return store.PodDeletionDeadline(cmdline.Namespace, cmdline.Pod)
				},
				Namespace: cmdline.Namespace, Name: cmdline.Pod, Node: cmdline.Node,
				Args: args, LogFile: cmdline.Log, Backoff: cmdline.Backoff,
				Log: cmd.ErrOrStderr(),
			})
		},
	}
	cmdline.AddFlags(cmd.Flags())
	cmd.MarkFlagRequired("lab-dir") //nolint:errcheck // the flag exists
	cmd.MarkFlagRequired("pod")     //nolint:errcheck // the flag exists
	return cmd
}
