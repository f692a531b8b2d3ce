package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/workshop"
)

// newWorkshop is `svclab workshop …`: classroom lessons (clusters/lessons)
// run step by step in their own lab, exercises that check themselves, and
// the students' reports.
func newWorkshop() *cobra.Command {
	var lessonsDir string
	cmd := &cobra.Command{
		Use:   "workshop",
		Short: "Classroom lessons: step through a lesson in its own lab, do its exercises, check them, report progress",
		Long: "A lesson (clusters/lessons/NAME) runs in a lab of its own, one step per `next`; every step's output is checked " +
			"against what the lesson says, live. Its exercises are checked against the lab's real rules, counters and traffic " +
			"(`check` exits 1 naming the item that fails; `hint` gives the exercise's hints one at a time). `progress` reports the student's work (text, json, html); " +
			"`class` puts many students' JSON reports in one table for the teacher. State is kept in " + workshop.StateDir() +
			" ($SVCLAB_WORKSHOP_DIR).",
		Example: "  svclab workshop list\n  svclab workshop start example-clusterip\n  svclab workshop next\n" +
			"  svclab workshop check three-pods\n  svclab workshop hint three-pods\n  svclab workshop progress -o html > me.html\n  svclab workshop reset",
	}
	cmd.PersistentFlags().StringVar(&lessonsDir, "lessons", "", "the lessons' folder (default: clusters/lessons of the checkout at or above the working directory, else the lessons built into svclab)")
	dir := func() (string, error) {
		if lessonsDir != "" {
			return lessonsDir, nil
		}
		return workshop.LessonsDir()
	}
	// The class's reports are checked against the teacher's lessons only
	// (--lessons, or the checkout's): a teacher's own lessons elsewhere are
	// not the built-in ones.
	teachersDir := func() (string, error) {
		if lessonsDir != "" {
			return lessonsDir, nil
		}
		if d, ok := workshop.CheckoutLessonsDir(); ok {
			return d, nil
		}
		return "", errors.New("no lessons folder")
	}
	cmd.AddCommand(newWorkshopList(dir), newWorkshopStart(dir), newWorkshopNext(), newWorkshopBack(),
		newWorkshopCheck(), newWorkshopHint(), newWorkshopProgress(), newWorkshopReset(), newWorkshopClass(teachersDir))
	return cmd
}

func newWorkshopList(dir func() (string, error)) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list [-o text|json]",
		Short: "List the lessons",
		Example: "  svclab workshop list\n" +
			"  svclab workshop list -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := dir()
			if err != nil {
				return err
			}
			ls, err := workshop.ListLessons(d)
			if err != nil {
				return err
			}
			return workshop.WriteList(cmd.OutOrStdout(), workshop.Summaries(ls), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

func newWorkshopStart(dir func() (string, error)) *cobra.Command {
	var opts workshop.StartOptions
	var auto bool
	cmd := &cobra.Command{
		Use:   "start LESSON [--cni X] [--auto] [--student NAME]",
		Short: "Create the lesson's lab and show its first step (--auto: run every step, for a demo)",
		Example: "  sudo svclab workshop start seed-001-ladder --student alice\n" +
			"  sudo svclab workshop start seed-004-nodeport --auto   # every step at once, for a demo",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeLessons(dir),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := dir()
			if err != nil && !isPath(args[0]) {
				return err
			}
			l, err := workshop.FindLesson(d, args[0])
			if err != nil {
				return err
			}
			if err := checkStudent(opts.Student); err != nil {
				return err
			}
			return workshopRun(cmd, func(ctx context.Context) error {
				out := cmd.OutOrStdout()
				opts.Out = out
				fmt.Fprintf(out, "svclab workshop — %s (lesson %s)\n", l.Spec.Title, l.Metadata.Name)
				r, st, err := workshop.Start(ctx, l, opts)
				if err != nil {
					return err
				}
				workshop.WriteVersionNotes(out, l)
				workshop.WriteUnmet(out, l)
				for {
					if err := workshop.Next(ctx, r, st); err != nil {
						if errors.Is(err, io.EOF) {
							break
						}
						return err
					}
					if !auto {
						fmt.Fprintf(out, "\n(svclab workshop next: the next step)\n")
						return nil
					}
				}
				workshop.WriteExercises(out, l)
				fmt.Fprintf(out, "\nThe lab %s keeps running: svclab workshop check EXERCISE checks your work, svclab workshop reset deletes it.\n", r.Lab.Name())
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&opts.CNI, "cni", "", "the lab's CNI: flannel-vxlan, calico-proxyarp or canal (default: the lesson's)")
	cmd.Flags().StringVar(&opts.Student, "student", "", "the student's name in reports (default: $SUDO_USER or $USER)")
	cmd.Flags().BoolVar(&auto, "auto", false, "run every step at once (a demo)")
	return cmd
}

func isPath(s string) bool { return strings.Contains(s, "/") }

func newWorkshopNext() *cobra.Command {
	return &cobra.Command{
		Use:     "next",
		Short:   "Run and show the lesson's next step (its output checked live)",
		Example: "  sudo svclab workshop next",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return workshopRun(cmd, func(ctx context.Context) error {
				out := cmd.OutOrStdout()
				r, st, err := workshop.Resume(out, "")
				if err != nil {
					return err
				}
				err = workshop.Next(ctx, r, st)
				if errors.Is(err, io.EOF) {
					fmt.Fprintf(out, "That was the last step.\n")
					workshop.WriteExercises(out, r.Lesson)
					return nil
				}
				return err
			})
		},
	}
}

func newWorkshopBack() *cobra.Command {
	return &cobra.Command{
		Use:     "back",
		Short:   "Show the previous step again, as it was shown",
		Example: "  sudo svclab workshop back",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, st, err := workshop.Resume(cmd.OutOrStdout(), "")
			if err != nil {
				return err
			}
			return workshop.Back(r, st)
		},
	}
}

func newWorkshopCheck() *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "check [EXERCISE] [--verbose]",
		Short: "Check an exercise (default: every exercise not passed yet) against the lab; exit 1 naming the item that fails",
		Long: "Checks the exercise against the lab's real state. A failed check says which item failed and why, and shows what " +
			"the lab showed, never the expression the item wanted (for many exercises that is the answer), unless the lesson " +
			"marks the item reveal: true; `svclab workshop hint` gives the exercise's hints one at a time. --verbose, for " +
			"the teacher, shows the expressions.",
		Example: "  sudo svclab workshop check                  # every exercise of the lesson\n" +
			"  sudo svclab workshop check four-replicas\n" +
			"  sudo svclab workshop check four-replicas --verbose   # for the teacher: the expressions checked",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeExercises,
		RunE: func(cmd *cobra.Command, args []string) error {
			return workshopRun(cmd, func(ctx context.Context) error {
				out := cmd.OutOrStdout()
				r, st, err := workshop.Resume(out, "")
				if err != nil {
					return err
				}
				var todo []*workshop.Exercise
				if len(args) == 1 {
					ex, ok := r.Lesson.Exercise(args[0])
					if !ok {
						return fmt.Errorf("lesson %s has no exercise %q (svclab workshop progress lists them)", r.Lesson.Metadata.Name, args[0])
					}
					todo = append(todo, ex)
				} else {
					for i := range r.Lesson.Spec.Exercises {
						ex := &r.Lesson.Spec.Exercises[i]
						if !passed(st, ex.Name) {
							todo = append(todo, ex)
						}
					}
				}
				failed := false
				for _, ex := range todo {
					res, err := r.Check(ctx, ex)
					if err != nil {
						return err
					}
					st.Record(res, time.Now())
					workshop.WriteResult(out, res, verbose)
					failed = failed || !res.Passed
				}
				if err := st.Save(); err != nil {
					return err
				}
				if len(todo) == 0 {
					fmt.Fprintf(out, "every exercise has passed\n")
				}
				if failed {
					return exitCode(1)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "for the teacher: show the expression a failed item wanted")
	return cmd
}

func passed(st *workshop.State, name string) bool {
	for _, e := range st.Exercises {
		if e.Name == name {
			return e.Passed
		}
	}
	return false
}

func newWorkshopProgress() *cobra.Command {
	var output, student string
	cmd := &cobra.Command{
		Use:   "progress [-o text|json|html] [--student NAME]",
		Short: "The student's progress: steps done, exercises passed with attempts and time",
		Example: "  sudo svclab workshop progress\n" +
			"  sudo svclab workshop progress -o json > alice.json\n" +
			"  sudo svclab workshop progress -o html > alice.html",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The report needs the state and the lesson, not the lab: it
			// is written even when the lab is gone (its picture then is).
			st, err := workshop.LoadState()
			if err != nil {
				return err
			}
			lesson, err := workshop.Load(st.LessonDir)
			if err != nil {
				return err
			}
			if student != "" {
				if err := checkStudent(student); err != nil {
					return err
				}
				st.Student = student
			}
			rep := workshop.NewReport(lesson, st)
			switch output {
			case "", "text":
				return rep.WriteText(cmd.OutOrStdout())
			case "json":
				return rep.WriteJSON(cmd.OutOrStdout())
			case "html":
				pic := ""
				if lab, err := netns.Open(st.Lab); err == nil {
					if pic, err = workshop.LabPicture(lab); err != nil {
						return err
					}
				}
				return rep.WriteHTML(cmd.OutOrStdout(), pic)
			}
			return fmt.Errorf("-o %q: want text, json or html", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text, json or html (self-contained, with the lab's picture)")
	cmd.Flags().StringVar(&student, "student", "", "the student's name in the report (default: the one given to start)")
	return cmd
}

func newWorkshopReset() *cobra.Command {
	return &cobra.Command{
		Use:     "reset",
		Short:   "Delete the lesson's lab and the workshop's state",
		Example: "  sudo svclab workshop reset",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lab, err := workshop.Reset()
			if err != nil {
				return err
			}
			if lab != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "lab %s deleted; the workshop's state is gone\n", lab)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "no lesson in progress; nothing to reset\n")
			}
			return nil
		},
	}
}

func newWorkshopClass(dir func() (string, error)) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "class REPORT.json… [-o text|html]",
		Short: "For the teacher: many students' progress reports (progress -o json) in one table",
		Example: "  svclab workshop class *.json\n" +
			"  svclab workshop class *.json -o html > class.html",
		Long: "Reports come from students and are checked as hostile input: each at most " +
			fmt.Sprintf("%d KiB with no more exercises than a lesson may have, names that are names, ", workshop.MaxReportBytes>>10) +
			"every exercise one its lesson declares (the lessons of --lessons, or of the checkout at or above the " +
			"working directory; without either, names are checked as names only). Names are made printable in every output. " +
			"The first bad report is the error, naming its file and field.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lessons, err := classLessons(dir)
			if err != nil {
				return err
			}
			if lessons == nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "workshop class: no lessons folder (--lessons DIR): exercise names checked as names only")
			}
			c, err := workshop.ReadClass(args, lessons)
			if err != nil {
				return err
			}
			switch output {
			case "", "text":
				return c.WriteText(cmd.OutOrStdout())
			case "html":
				return c.WriteHTML(cmd.OutOrStdout())
			}
			return fmt.Errorf("-o %q: want text or html", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or html")
	return cmd
}

// classLessons are the lessons the class's reports are checked against:
// those of --lessons (which must load), else of the checkout at or above
// the working directory, else none (nil).
func classLessons(dir func() (string, error)) (*workshop.ClassLessons, error) {
	d, err := dir()
	if err != nil {
		return nil, nil //nolint:nilerr // no lessons folder: names are checked as names only
	}
	ls, err := workshop.ListLessons(d)
	if err != nil {
		return nil, err
	}
	return &workshop.ClassLessons{Dir: d, Lessons: ls}, nil
}

// checkStudent checks the student's name a report will carry: flag (from
// --student), or else the default (workshop.Student).
func checkStudent(flag string) error {
	if flag != "" {
		return workshop.CheckStudent(flag, "--student")
	}
	if err := workshop.CheckStudent(workshop.Student(), "the student's name ($SUDO_USER or $USER)"); err != nil {
		return fmt.Errorf("%w: give --student NAME", err)
	}
	return nil
}

// workshopRun runs a workshop command that touches the lab with a context
// that Ctrl-C and SIGTERM cancel, after checking the host programs.
func workshopRun(cmd *cobra.Command, run func(context.Context) error) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := hostprog.Ensure(ctx, cmd.OutOrStdout(), append(hostprog.Needs(hostprog.Lab), hostprog.Needs(hostprog.Workshop)...)...); err != nil {
		return err
	}
	return run(ctx)
}
