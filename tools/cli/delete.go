package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/builtin"
)

func newDelete() *cobra.Command {
	var labName string
	var files []string
	var del deleteFlags
	cmd := &cobra.Command{
		Use:   "delete --lab NAME -f FILE | lab | labs | pod",
		Short: "Delete the objects a manifest names (like kubectl delete -f), pods, or labs",
		Example: `  sudo svclab delete pod web-xxxxx           # terminates for its grace period, like kubectl
  sudo svclab delete -f workloads/nginx.yaml   # like kubectl delete -f (a built-in workload here)
  sudo svclab delete lab single-node        # or: delete lab --name single-node; delete labs --all`,
		Args: cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("-f: required (or a subcommand: lab, labs, pod)")
			}
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			for _, f := range files {
				f, err := builtin.Resolve(f, builtin.Workload)
				if err != nil {
					return err
				}
				if err := l.DeleteManifest(cmd.Context(), f, netns.Options{Out: cmd.OutOrStdout()}, del.options()); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	addLabFlag(cmd, &labName)
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file whose objects to delete, or a built-in workload (workloads/nginx.yaml; svclab get examples) (repeatable)")
	cmd.Flags().BoolVar(&del.ignoreNotFound, "ignore-not-found", false, "an object that does not exist is no error")
	del.addFlags(cmd)
	cmd.AddCommand(newDeleteLabs(), newDeletePod())
	return cmd
}
