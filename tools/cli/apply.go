package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs"
)

func newApply() *cobra.Command {
	var labName string
	var files []string
	cmd := &cobra.Command{
		Use:   "apply --lab NAME -f FILE",
		Short: "Apply Kubernetes manifests (Namespace, Pod, Service, ConfigMap, EndpointSlice, Deployment, ReplicaSet, StatefulSet, DaemonSet) to a lab",
		Args:  cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("-f: required")
			}
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			for _, f := range files {
				if err := l.Apply(cmd.Context(), f, labs.Options{Out: cmd.OutOrStdout()}); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	addLabFlag(cmd, &labName)
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file (repeatable)")
	cmd.MarkFlagRequired("filename") //nolint:errcheck // the flag exists
	return cmd
}
