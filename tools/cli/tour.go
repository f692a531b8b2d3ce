package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/tools/workshop"
)

// The tours are workshop lessons run at once (workshop.Demo): make lab is
// seed 001's, make lab-nodeport seed 004's.
const (
	singleNodeLesson = "seed-001-ladder"
	nodePortLesson   = "seed-004-nodeport"
)

func newTour() *cobra.Command {
	var keep bool
	var cni, lessonsDir string
	cmd := &cobra.Command{
		Use:   "tour",
		Short: "Guided walk-throughs: a workshop lesson run at once, every step live and its output checked, then the lab deleted",
		Example: "  sudo svclab tour nodeport\n" +
			"  sudo svclab tour single-node --keep\n" +
			"  sudo svclab tour lesson seed-003-pod-network",
	}
	cmd.PersistentFlags().BoolVar(&keep, "keep", os.Getenv("KEEP") == "1", "keep the lab running at the end (also KEEP=1): svclab workshop check, then svclab workshop reset")
	cmd.PersistentFlags().StringVar(&cni, "cni", os.Getenv("CNI"), "the lab's CNI: canal, flannel-vxlan or calico-proxyarp (default: the lesson's; also CNI=)")
	cmd.PersistentFlags().StringVar(&lessonsDir, "lessons", "", "the lessons' folder (default: clusters/lessons of the checkout, else the lessons built into svclab)")
	run := func(cmd *cobra.Command, lesson string) error {
		return runTourLesson(cmd, lessonsDir, lesson, cni, keep)
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "lesson LESSON",
			Short: "A workshop lesson (clusters/lessons) run at once",
			Example: "  sudo svclab tour lesson seed-003-pod-network\n" +
				"  sudo svclab tour lesson ./my-lessons/my-lesson --keep",
			Args: cobra.ExactArgs(1),
			ValidArgsFunction: completeLessons(func() (string, error) {
				if lessonsDir != "" {
					return lessonsDir, nil
				}
				return workshop.LessonsDir()
			}),
			RunE: func(cmd *cobra.Command, args []string) error { return run(cmd, args[0]) },
		},
		&cobra.Command{
			Use:   "single-node",
			Short: "Seed 001's nginx over 3 pods: the 1/3, 1/2, 1 probability ladder (lesson " + singleNodeLesson + ")",
			Example: "  sudo svclab tour single-node\n" +
				"  sudo svclab tour single-node --keep   # then: sudo svclab workshop check; sudo svclab workshop reset",
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd, singleNodeLesson) },
		},
		&cobra.Command{
			Use:   "nodeport",
			Short: "Seed 004: a NodePort request from an outside client, across nodes over VXLAN, SNATed, hop by hop (lesson " + nodePortLesson + ")",
			Example: "  sudo svclab tour nodeport\n" +
				"  sudo svclab tour nodeport --cni calico-proxyarp",
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd, nodePortLesson) },
		},
	)
	return cmd
}

// runTourLesson finds the lesson (a name in the lessons' folder, or a
// path) and runs it at once; Ctrl-C deletes its lab.
func runTourLesson(cmd *cobra.Command, lessonsDir, name, cni string, keep bool) error {
	dir := lessonsDir
	if dir == "" && !isPath(name) {
		d, err := workshop.LessonsDir()
		if err != nil {
			return err
		}
		dir = d
	}
	l, err := workshop.FindLesson(dir, name)
	if err != nil {
		return err
	}
	return workshopRun(cmd, func(ctx context.Context) error {
		out := cmd.OutOrStdout()
		fmt.Fprintf(out, "svclab tour — lesson %s: %s\n", l.Metadata.Name, l.Spec.Title)
		workshop.WriteVersionNotes(out, l)
		return workshop.Demo(ctx, l, workshop.StartOptions{CNI: cni, Out: out}, keep)
	})
}
