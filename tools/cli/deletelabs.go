package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/netns"
)

// newDeleteLabs is `svclab delete lab NAME…` (or `delete labs`, as
// kubectl takes both), with the older `--name NAME` and `--all` for
// every lab, crashed ones too. Deleting is idempotent.
func newDeleteLabs() *cobra.Command {
	var name string
	var all bool
	cmd := &cobra.Command{
		Use:     "lab NAME… | --name NAME | --all",
		Aliases: []string{"labs"},
		Short:   "Delete labs: their processes, namespaces and state (idempotent); --all: every lab, also crashed ones",
		Example: `  sudo svclab delete lab single-node
  sudo svclab delete labs web-a web-b
  sudo svclab delete lab --name single-node
  sudo svclab delete labs --all`,
		ValidArgsFunction: completeLabNames,
		RunE: labChange(func(cmd *cobra.Command, names []string) error {
			if cmd.Flags().Changed("name") {
				if name == "" {
					return fmt.Errorf("--name: required")
				}
				if err := netns.CheckName(name); err != nil {
					return fmt.Errorf("--name: %w", err)
				}
				names = append(names, name)
			}
			if all {
				if len(names) > 0 {
					return errors.New("--all deletes every lab: give no names with it")
				}
				deleted, err := netns.DeleteAll()
				for _, n := range deleted {
					fmt.Fprintf(cmd.OutOrStdout(), "lab %s deleted\n", n)
				}
				return err
			}
			if len(names) == 0 {
				return errors.New("a lab name is required (delete lab NAME…, or --name NAME), or --all for every lab")
			}
			for _, n := range names {
				if err := netns.CheckName(n); err != nil {
					return fmt.Errorf("lab %q: %w", n, err)
				}
			}
			var errs []error
			for _, n := range names {
				if err := netns.Delete(n); err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "lab %s deleted\n", n)
			}
			return errors.Join(errs...)
		}),
	}
	cmd.Flags().StringVar(&name, "name", "", "lab name (the same as giving it as an argument)")
	cmd.Flags().BoolVar(&all, "all", false, "delete every lab")
	cmd.RegisterFlagCompletionFunc("name", completeLabNames) //nolint:errcheck // the flag exists
	return cmd
}
