package workshop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/topology"
)

// StartOptions are the options of Start.
type StartOptions struct {
	// CNI replaces the lab's CNI (else the lesson's spec.cni, else the lab
	// file's).
	CNI string
	// Student names the student in reports (default $SUDO_USER, $USER).
	Student string
	Out     io.Writer
	Binary  string
	// Timeout bounds how long creating the lab waits for its proxies and
	// servers (default: the labs package's).
	Timeout time.Duration
	// Tour marks the lesson as run by Demo (see State.Tour).
	Tour bool
}

// Student is the default student name: the user who ran sudo, else $USER.
func Student() string {
	for _, v := range []string{"SUDO_USER", "USER"} {
		if s := os.Getenv(v); s != "" {
			return s
		}
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "student"
}

// Start creates the lesson's lab (named after the lesson) and records the
// lesson as the one in progress. Nothing is recorded when the lab cannot
// be made; a lesson already in progress must be reset first.
func Start(ctx context.Context, l *Lesson, opts StartOptions) (*Runner, *State, error) {
	if st, err := LoadState(); err == nil {
		return nil, nil, fmt.Errorf("lesson %s is in progress (lab %s): svclab workshop reset ends it first", st.Lesson, st.Lab)
	} else if !errors.Is(err, ErrNoLesson) {
		return nil, nil, err
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	cni := opts.CNI
	if cni == "" {
		cni = l.Spec.CNI
	}
	if len(l.Spec.CNIs) > 0 && !slices.Contains(l.Spec.CNIs, cni) {
		return nil, nil, fmt.Errorf("lesson %s is written for the CNIs %s, not %q", l.Metadata.Name, strings.Join(l.Spec.CNIs, ", "), cni)
	}
	labFile, err := writeLabFile(l, cni)
	if err != nil {
		return nil, nil, err
	}
	student := opts.Student
	if student == "" {
		student = Student()
	}
	// The state is recorded before the lab is made, so that a start killed
	// half way leaves a lesson that reset (or, for a tour, the next tour)
	// ends, deleting whatever of the lab was made.
	st := &State{Lesson: l.Metadata.Name, LessonDir: l.Dir, Lab: l.Metadata.Name, CNI: cni, Student: student,
		Started: time.Now().UTC().Truncate(time.Second), Cursor: -1, Tour: opts.Tour}
	for _, ex := range l.Spec.Exercises {
		st.exercise(ex.Name)
	}
	if err := st.Save(); err != nil {
		return nil, nil, err
	}
	lab, took, err := netns.Create(ctx, labFile, netns.Options{Out: opts.Out, Binary: opts.Binary, Timeout: opts.Timeout})
	if err != nil {
		removeState() //nolint:errcheck // the error that matters is Create's
		return nil, nil, err
	}
	fmt.Fprintf(opts.Out, "lab %s is up in %s\n", lab.Name(), took.Round(time.Millisecond))
	return &Runner{Lesson: l, Lab: lab, Binary: opts.Binary, Out: opts.Out}, st, nil
}

// LabYAML is the lesson's lab file with its name set to the lesson's and,
// when cni is given, its spec.cni replaced; validated as a lab file.
func LabYAML(l *Lesson, cni string) ([]byte, error) {
	data, err := topology.ReadFile(l.LabFile)
	if err != nil {
		return nil, err
	}
	if _, err := topology.Parse(data, l.LabFile); err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", l.LabFile, err)
	}
	meta, _ := doc["metadata"].(map[string]any)
	spec, _ := doc["spec"].(map[string]any)
	meta["name"] = l.Metadata.Name
	if cni != "" {
		spec["cni"] = cni
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	if _, err := topology.Parse(out, l.LabFile+" (for lesson "+l.Metadata.Name+")"); err != nil {
		return nil, err
	}
	return out, nil
}

// writeLabFile writes LabYAML into the workshop's state directory.
func writeLabFile(l *Lesson, cni string) (string, error) {
	data, err := LabYAML(l, cni)
	if err != nil {
		return "", err
	}
	if err := writeStateFile("lab.yaml", data); err != nil {
		return "", err
	}
	return store().Confine("lab.yaml")
}

// Resume opens the lesson in progress and its lab.
func Resume(out io.Writer, binary string) (*Runner, *State, error) {
	st, err := LoadState()
	if err != nil {
		return nil, nil, err
	}
	l, err := Load(st.LessonDir)
	if err != nil {
		return nil, nil, err
	}
	lab, err := netns.Open(st.Lab)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (svclab workshop reset, then start the lesson again)", err)
	}
	return &Runner{Lesson: l, Lab: lab, Binary: binary, Out: out}, st, nil
}

// Next shows the next step: again from its saved output when it ran
// before (after back), else live. It returns io.EOF after the last step.
func Next(ctx context.Context, r *Runner, st *State) error {
	i := st.Cursor + 1
	if i >= len(r.Lesson.Spec.Steps) {
		return io.EOF
	}
	if i < st.StepsDone {
		text, err := StepOutput(i)
		if err != nil {
			return err
		}
		fmt.Fprintf(r.Out, "(as shown before)\n%s", text)
		st.Cursor = i
		return st.Save()
	}
	text, err := r.RunStep(ctx, i)
	if saveErr := saveStepOutput(i, text); saveErr != nil {
		return errors.Join(err, saveErr)
	}
	if err != nil {
		return err
	}
	st.Cursor, st.StepsDone = i, i+1
	return st.Save()
}

// Back shows the step before the one shown last, as it was shown.
func Back(r *Runner, st *State) error {
	if st.Cursor <= 0 {
		return errors.New("at the first step: nothing before it")
	}
	st.Cursor--
	text, err := StepOutput(st.Cursor)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "(as shown before)\n%s", text)
	return st.Save()
}

// Reset deletes the lesson's lab (if it is still there) and the workshop's
// state: svclab's files in a state directory svclab made; one it did not
// make is refused before anything is read or deleted (its state.json
// could name any lab).
func Reset() (string, error) {
	if _, err := checkStateDir(); err != nil {
		return "", err
	}
	st, err := LoadState()
	if errors.Is(err, ErrNoLesson) {
		return "", removeState()
	}
	if err != nil {
		return "", errors.Join(err, removeState())
	}
	if err := netns.Delete(st.Lab); err != nil {
		return st.Lab, err
	}
	return st.Lab, removeState()
}

// endUnfinishedTour resets the workshop when the lesson in progress is a
// tour's (one that was killed, or kept with --keep): a tour replaces it. A
// student's lesson in progress is left alone (Start then refuses).
func endUnfinishedTour(out io.Writer) error {
	st, err := LoadState()
	if err != nil || !st.Tour {
		return nil
	}
	if out == nil {
		out = io.Discard
	}
	fmt.Fprintf(out, "an earlier tour of %s did not end (lab %s): deleting it first\n", st.Lesson, st.Lab)
	_, err = Reset()
	return err
}

// Demo runs a whole lesson at once, as a tour: it starts the lesson, runs
// every step live (the first failing expectation ends it), lists the
// exercises, and resets the workshop (deleting the lab) unless keep, and
// always when a step fails or ctx ends.
func Demo(ctx context.Context, l *Lesson, opts StartOptions, keep bool) (err error) {
	if err := endUnfinishedTour(opts.Out); err != nil {
		return err
	}
	opts.Tour = true
	r, st, err := Start(ctx, l, opts)
	if err != nil {
		return err
	}
	defer func() {
		if keep && err == nil {
			fmt.Fprintf(r.Out, "\nThe lab %s keeps running: svclab workshop check EXERCISE checks your work, svclab workshop reset deletes it.\n", r.Lab.Name())
			return
		}
		if _, resetErr := Reset(); resetErr != nil {
			err = errors.Join(err, resetErr)
			return
		}
		fmt.Fprintf(r.Out, "\nlab %s deleted.\n", r.Lab.Name())
	}()
	for {
		if err := Next(ctx, r, st); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
	}
	WriteExercises(r.Out, l)
	return ctx.Err()
}

// WriteExercises lists the lesson's exercises and their tasks.
func WriteExercises(out io.Writer, l *Lesson) {
	if len(l.Spec.Exercises) == 0 {
		return
	}
	fmt.Fprintf(out, "\nExercises (svclab workshop check NAME checks one):\n")
	for _, ex := range l.Spec.Exercises {
		fmt.Fprintf(out, "\n  %s\n", ex.Name)
		writeIndented(out, strings.TrimRight(ex.Task, "\n"))
	}
}

// WriteVersionNotes prints the lesson's version notes, if any.
func WriteVersionNotes(out io.Writer, l *Lesson) {
	if l.Spec.VersionNotes == "" {
		return
	}
	fmt.Fprintf(out, "\nWhere the article's kube-proxy differs from today's:\n")
	writeIndented(out, strings.TrimRight(l.Spec.VersionNotes, "\n"))
}
