package workshop

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackAndNextReshow: back and next over steps that ran show their
// saved output (no lab needed), and the cursor moves; the state survives
// a save and load, inside the workshop's directory only.
func TestBackAndNextReshow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "workshop")
	t.Setenv("SVCLAB_WORKSHOP_DIR", dir)
	l, st := reportFixture(t)
	for i := range 3 {
		if err := saveStepOutput(i, StepHeading(l, i)+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	r := &Runner{Lesson: l, Out: &out}
	if err := Back(r, st); err != nil || st.Cursor != 1 || !strings.Contains(out.String(), "Step 2/3 · chains") {
		t.Fatalf("back: %v, cursor %d, output %q", err, st.Cursor, out.String())
	}
	out.Reset()
	if err := Next(context.Background(), r, st); err != nil || st.Cursor != 2 || !strings.Contains(out.String(), "(as shown before)\nStep 3/3 · split") {
		t.Fatalf("next: %v, cursor %d, output %q", err, st.Cursor, out.String())
	}
	if err := Next(context.Background(), r, st); !errors.Is(err, io.EOF) {
		t.Errorf("next after the last step: %v, want io.EOF", err)
	}
	st.Cursor = 0
	if err := Back(r, st); err == nil {
		t.Error("back at the first step: no error")
	}
	loaded, err := LoadState()
	if err != nil || loaded.Student != "alice" || loaded.Exercises[0].Attempts != 2 {
		t.Errorf("LoadState = %+v, %v", loaded, err)
	}
	if err := removeState(); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadState(); !errors.Is(err, ErrNoLesson) {
		t.Errorf("after removal: %v, want ErrNoLesson", err)
	}
	if _, err := os.Stat(filepath.Dir(dir)); err != nil {
		t.Errorf("the directory above the workshop's was removed: %v", err)
	}
}
