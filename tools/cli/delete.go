package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs"
)

func newDelete() *cobra.Command {
	cmd := &cobra.Command{Use: "delete", Short: "Delete labs"}
	var name string
	one := &cobra.Command{
		Use:   "lab --name NAME",
		Short: "Delete a lab: its processes, namespaces and state (idempotent)",
		Args:  cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return fmt.Errorf("--name: required")
			}
			if err := labs.CheckName(name); err != nil {
				return fmt.Errorf("--name: %w", err)
			}
			if err := labs.Delete(name); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "lab %s deleted\n", name)
			return nil
		}),
	}
	one.Flags().StringVar(&name, "name", "", "lab name")
	one.MarkFlagRequired("name")                             //nolint:errcheck // the flag exists
	one.RegisterFlagCompletionFunc("name", completeLabNames) //nolint:errcheck // the flag exists
	var all bool
	many := &cobra.Command{
		Use:   "labs --all",
		Short: "Delete every lab, also crashed ones (idempotent)",
		Args:  cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			if !all {
				return fmt.Errorf("--all: required (delete labs deletes every lab)")
			}
			names, err := labs.DeleteAll()
			for _, n := range names {
				fmt.Fprintf(cmd.OutOrStdout(), "lab %s deleted\n", n)
			}
			return err
		}),
	}
	many.Flags().BoolVar(&all, "all", false, "delete every lab")
	many.MarkFlagRequired("all") //nolint:errcheck // the flag exists
	cmd.AddCommand(one, many, newDeletePod())
	return cmd
}
