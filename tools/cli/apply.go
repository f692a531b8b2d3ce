package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/netns"
)

func newApply() *cobra.Command {
	var labName string
	var files []string
	var recursive bool
	cmd := &cobra.Command{
		Use:   "apply --lab NAME -f FILE|DIR|-",
		Short: "Apply Kubernetes manifests (Namespace, Pod, Service, ConfigMap, EndpointSlice, Deployment, ReplicaSet, StatefulSet, DaemonSet) to a lab",
		Long: "Apply Kubernetes manifests to a lab, like kubectl apply -f: a file, - for stdin, or a directory's " +
			".json, .yaml and .yml files in lexical order (-R: its subdirectories' too). Each file is applied as one change, in turn. " +
			"A path that does not exist may name a workload built into svclab (the checkout's clusters/workloads: " +
			"workloads/nginx.yaml, or clusters/workloads/nginx.yaml as from the checkout; svclab get examples lists them).",
		Example: `  sudo svclab apply --lab single-node -f workloads/nginx.yaml   # built in (clusters/workloads/ in the checkout)
  sudo svclab apply -f ./web.yaml
  sudo svclab apply -f manifests/                     # every .yaml, .yml and .json file in it, sorted
  sudo svclab apply -R -f manifests/                  # and in its subdirectories
  cat web.yaml | sudo svclab apply -f -`,
		Args: cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("-f: required")
			}
			paths, err := manifestFiles(files, recursive)
			if err != nil {
				return err
			}
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			for _, p := range paths {
				m, source, err := readManifest(p, cmd.InOrStdin())
				if err != nil {
					return err
				}
				if err := l.ApplyManifests(cmd.Context(), m, source, netns.Options{Out: cmd.OutOrStdout()}); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	addLabFlag(cmd, &labName)
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file, directory (its .json, .yaml and .yml files), - for stdin, or a built-in workload (workloads/nginx.yaml) (repeatable)")
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "read the directories given with -f recursively")
	cmd.MarkFlagRequired("filename") //nolint:errcheck // the flag exists
	return cmd
}
