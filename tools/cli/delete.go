package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs"
)

func newDelete() *cobra.Command {
	var labName string
	var files []string
	var del deleteFlags
	cmd := &cobra.Command{
		Use:   "delete --lab NAME -f FILE | lab | labs | pod",
		Short: "Delete the objects a manifest names (like kubectl delete -f), pods, or labs",
		Args:  cobra.NoArgs,
		RunE: labChange(func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("-f: required (or a subcommand: lab, labs, pod)")
			}
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			for _, f := range files {
				if err := l.DeleteManifest(cmd.Context(), f, labs.Options{Out: cmd.OutOrStdout()}, del.options()); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	addLabFlag(cmd, &labName)
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file whose objects to delete (repeatable)")
	cmd.Flags().BoolVar(&del.ignoreNotFound, "ignore-not-found", false, "an object that does not exist is no error")
	del.addFlags(cmd)
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
