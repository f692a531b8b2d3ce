package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/svclab/svclab/internal/hostprog"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/tools/tour"
	"github.com/svclab/svclab/tools/workshop"
)

func newTour() *cobra.Command {
	opts := tour.Options{Out: os.Stdout} // a terminal gets colours
	cmd := &cobra.Command{Use: "tour", Short: "Guided walk-throughs: bring up a lab, send traffic, show what the kernel did"}
	single := &cobra.Command{
		Use:   "single-node",
		Short: "Seed 001's nginx over 3 pods: the 1/3, 1/2, 1 probability ladder",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return tourRun(cmd, func(ctx context.Context) error { return tour.SingleNode(ctx, opts) })
		},
	}
	var cni string
	nodeport := &cobra.Command{
		Use:   "nodeport [--cni canal|flannel-vxlan|calico-proxyarp]",
		Short: "Seed 004: a NodePort request from an outside client, across nodes over VXLAN, SNATed, hop by hop",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return tourRun(cmd, func(ctx context.Context) error { return tour.NodePort(ctx, opts, cni) })
		},
	}
	nodeport.Flags().StringVar(&cni, "cni", os.Getenv("CNI"), "CNI variant: canal (the article's), flannel-vxlan or calico-proxyarp (also CNI=)")
	cmd.AddCommand(nodeport)
	var lessonCNI, lessonsDir string
	lesson := &cobra.Command{
		Use:   "lesson LESSON [--cni X] [--keep]",
		Short: "A workshop lesson (clusters/lessons) run at once: every step live, its output checked, then the lab deleted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := lessonsDir
			if dir == "" && !isPath(args[0]) {
				d, err := workshop.LessonsDir()
				if err != nil {
					return err
				}
				dir = d
			}
			l, err := workshop.FindLesson(dir, args[0])
			if err != nil {
				return err
			}
			return workshopRun(cmd, func(ctx context.Context) error {
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "svclab tour — lesson %s: %s\n", l.Metadata.Name, l.Spec.Title)
				workshop.WriteVersionNotes(out, l)
				return workshop.Demo(ctx, l, workshop.StartOptions{CNI: lessonCNI, Out: out}, opts.Keep)
			})
		},
	}
	lesson.Flags().StringVar(&lessonCNI, "cni", os.Getenv("CNI"), "the lab's CNI (default: the lesson's; also CNI=)")
	lesson.Flags().StringVar(&lessonsDir, "lessons", "", "the lessons' folder (default: clusters/lessons of the checkout)")
	cmd.AddCommand(lesson)
	cmd.PersistentFlags().BoolVar(&opts.Keep, "keep", os.Getenv("KEEP") == "1", "keep the lab running at the end (also KEEP=1)")
	cmd.AddCommand(single)
	return cmd
}

// tourRun runs a tour with a context that Ctrl-C and SIGTERM cancel: the
// tour then deletes its lab before it returns.
func tourRun(cmd *cobra.Command, run func(context.Context) error) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := hostprog.Ensure(ctx, cmd.OutOrStdout(), append(hostprog.Needs(hostprog.Lab), hostprog.Needs(hostprog.Tour)...)...); err != nil {
		return err
	}
	return run(ctx)
}
