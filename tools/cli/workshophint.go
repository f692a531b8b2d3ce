package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/tools/workshop"
)

// newWorkshopHint is `svclab workshop hint [EXERCISE]`: the exercise's
// hints one at a time, each call the next (the state counts them), for the
// first exercise not passed yet unless one is named.
func newWorkshopHint() *cobra.Command {
	return &cobra.Command{
		Use:   "hint [EXERCISE]",
		Short: "Give the exercise's next hint, one at a time (default: the first exercise not passed yet)",
		Example: "  sudo svclab workshop hint                  # the first exercise not passed yet\n" +
			"  sudo svclab workshop hint four-replicas    # again for the next hint",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeExercises,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := workshop.LoadState()
			if err != nil {
				return err
			}
			l, err := workshop.Load(st.LessonDir)
			if err != nil {
				return err
			}
			var ex *workshop.Exercise
			if len(args) == 1 {
				var ok bool
				if ex, ok = l.Exercise(args[0]); !ok {
					return fmt.Errorf("lesson %s has no exercise %q (svclab workshop progress lists them)", l.Metadata.Name, args[0])
				}
			} else if ex = st.FirstUnpassed(l); ex == nil {
				fmt.Fprintln(cmd.OutOrStdout(), "every exercise has passed: no hint needed")
				return nil
			}
			h, err := st.NextHint(ex)
			if err != nil {
				return err
			}
			if err := st.Save(); err != nil {
				return err
			}
			workshop.WriteHint(cmd.OutOrStdout(), h)
			return nil
		},
	}
}
