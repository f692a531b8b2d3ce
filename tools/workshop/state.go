package workshop

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/svclab/svclab/internal/boundedread"
	"github.com/svclab/svclab/internal/labstore"
)

// State is the student's progress through the lesson in progress, kept in
// the workshop's state directory (StateDir) as state.json.
type State struct {
	Lesson    string    `json:"lesson"`
	LessonDir string    `json:"lessonDir"`
	Lab       string    `json:"lab"`
	CNI       string    `json:"cni,omitempty"`
	Student   string    `json:"student"`
	Started   time.Time `json:"started"`
	// Tour is set when the lesson runs as a tour (Demo: svclab tour, make
	// lab, make lab-nodeport): the next tour ends one that did not finish
	// (killed, its terminal closed) instead of refusing to start.
	Tour bool `json:"tour,omitempty"`
	// Cursor is the step shown last (-1 before the first); StepsDone how
	// many steps have run and passed, in order.
	Cursor    int             `json:"cursor"`
	StepsDone int             `json:"stepsDone"`
	Exercises []ExerciseState `json:"exercises"`
}

// ExerciseState is the student's record on one exercise.
type ExerciseState struct {
	Name     string     `json:"name"`
	Attempts int        `json:"attempts"`
	Passed   bool       `json:"passed"`
	PassedAt *time.Time `json:"passedAt,omitempty"`
	// HintsShown is how many of the exercise's hints the student has
	// asked for (svclab workshop hint), in order.
	HintsShown int `json:"hintsShown,omitempty"`
}

// maxStateBytes bounds state.json and a report read back.
const maxStateBytes = 1 << 20

// StateDir is where the workshop keeps its state: $SVCLAB_WORKSHOP_DIR, or
// "workshop" beside the labs' state root (/run/svclab/workshop); svclab
// writes and deletes there only when it made it (see StateMarker).
func StateDir() string {
	if dir := os.Getenv("SVCLAB_WORKSHOP_DIR"); dir != "" {
		return filepath.Clean(dir)
	}
	return filepath.Join(filepath.Dir(labstore.Root()), "workshop")
}

// store is the workshop's state directory as a confined store: every file
// written or removed resolves inside it.
func store() *labstore.Store { return labstore.OpenDir(StateDir()) }

// ErrNoLesson is the error when no lesson is in progress.
var ErrNoLesson = errors.New("no lesson in progress (svclab workshop start LESSON starts one; svclab workshop list lists them)")

// LoadState reads the lesson in progress; ErrNoLesson when there is none.
func LoadState() (*State, error) {
	path, err := store().Confine("state.json")
	if err != nil {
		return nil, err
	}
	data, err := boundedread.ReadFile(path, maxStateBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoLesson
	}
	if err != nil {
		return nil, fmt.Errorf("workshop state %s: %w", path, err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("workshop state %s: %w (svclab workshop reset starts over)", path, err)
	}
	return &st, nil
}

// Save writes the state.
func (st *State) Save() error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeStateFile("state.json", append(data, '\n'))
}

// exercise returns the record of the named exercise, adding one.
func (st *State) exercise(name string) *ExerciseState {
	for i := range st.Exercises {
		if st.Exercises[i].Name == name {
			return &st.Exercises[i]
		}
	}
	st.Exercises = append(st.Exercises, ExerciseState{Name: name})
	return &st.Exercises[len(st.Exercises)-1]
}

// Record counts one attempt at an exercise and, the first time it
// passes, when. A check that could not run on this kernel is no attempt.
func (st *State) Record(res CheckResult, at time.Time) {
	e := st.exercise(res.Exercise)
	if e.Passed || res.CannotRun {
		return // attempts after a pass do not count
	}
	e.Attempts++
	if res.Passed {
		e.Passed = true
		at = at.UTC().Truncate(time.Second)
		e.PassedAt = &at
	}
}

// saveStepOutput keeps what step i printed, for `back`.
func saveStepOutput(i int, text string) error {
	return writeStateFile(filepath.Join("steps", strconv.Itoa(i)+".txt"), []byte(text))
}

// StepOutput is what step i printed when it ran.
func StepOutput(i int) (string, error) {
	path, err := store().Confine("steps", strconv.Itoa(i)+".txt")
	if err != nil {
		return "", err
	}
	data, err := boundedread.ReadFile(path, 4*maxOutput)
	return string(data), err
}
