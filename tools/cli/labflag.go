package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/netns"
)

// addLabFlag binds --lab to name, with shell completion of the labs'
// names. Like kubectl's current context, an empty --lab means the only
// lab when exactly one exists (openLab).
func addLabFlag(cmd *cobra.Command, name *string) {
	cmd.Flags().StringVar(name, "lab", "", "lab name (default: the only lab, when there is exactly one)")
	registerLabCompletion(cmd)
}

// registerLabCompletion completes an existing --lab flag with the labs'
// names.
func registerLabCompletion(cmd *cobra.Command) {
	cmd.RegisterFlagCompletionFunc("lab", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) { //nolint:errcheck // the flag exists
		names, err := netns.List()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}

// openLab opens the lab called name, or, when name is empty, the only lab.
func openLab(name string) (*netns.Lab, error) {
	if name == "" {
		var err error
		if name, err = onlyLab(); err != nil {
			return nil, err
		}
	}
	return netns.Open(name)
}

// onlyLab is the name of the one lab there is, or an error saying why
// --lab is needed.
func onlyLab() (string, error) {
	names, err := netns.List()
	if err != nil {
		return "", err
	}
	switch len(names) {
	case 1:
		return names[0], nil
	case 0:
		return "", fmt.Errorf("--lab: required: there is no lab (svclab create lab --config FILE makes one)")
	}
	return "", fmt.Errorf("--lab: required: there are %d labs (%s)", len(names), strings.Join(names, ", "))
}
