package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/kind"
)

// newGetKubeconfig is `svclab get kubeconfig --name CLUSTER`, as `kind get
// kubeconfig`: the kind cluster's kubeconfig on stdout, read from the
// cluster's control plane (external: 127.0.0.1:port in the Docker
// daemon's network namespace; --internal: the control-plane container's
// name:6443, as the nodes reach it).
func newGetKubeconfig() *cobra.Command {
	var name string
	var internal bool
	cmd := &cobra.Command{
		Use:   "kubeconfig [--name CLUSTER] [--internal]",
		Short: "Print a kind cluster's kubeconfig (like kind get kubeconfig)",
		Example: `  sudo svclab get kubeconfig --name demo > demo.kubeconfig
  sudo svclab get kubeconfig --name demo --internal   # the address the nodes reach`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return fmt.Errorf("--name: required")
			}
			cfg, err := kind.Kubeconfig(cmd.Context(), name, internal)
			if err != nil {
				return fmt.Errorf("kubeconfig of cluster %q: %w", name, err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), cfg)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", kind.DefaultName, "cluster name")
	cmd.Flags().BoolVar(&internal, "internal", false, "use the control plane's address inside the kind network (name:6443) instead of 127.0.0.1:port")
	cmd.RegisterFlagCompletionFunc("name", completeClusterNames) //nolint:errcheck // the flag exists
	return cmd
}

// completeClusterNames completes --name with the kind clusters' names.
func completeClusterNames(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	cs, err := kind.List(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
