package workshop

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

// TestAttackersFolderIsNotResetByRoot plays finding 8 of the hardening
// issue: SVCLAB_WORKSHOP_DIR reaches root's `svclab workshop reset` (sudo
// -E) naming a folder svclab did not make — here nobody's, holding their
// work and a state.json that names another user's lab. Reset refuses
// before it reads or deletes anything: the folder, its files and the other
// lab are all still there; and svclab writes no state into it.
func TestAttackersFolderIsNotResetByRoot(t *testing.T) {
	roottest.Require(t, "plays root's reset against a folder of nobody's")
	labsRoot := filepath.Join(t.TempDir(), "labs")
	t.Setenv("SVCLAB_STATE_DIR", labsRoot)
	victim := filepath.Join(labsRoot, "victim", "lab.yaml")
	if err := os.MkdirAll(filepath.Dir(victim), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, []byte("kind: Lab\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(roottest.SharedTmp(t), "thesis")
	roottest.RunAsNobody(t, `mkdir "$1" && echo chapter one > "$1/thesis.txt" && echo '{"lesson":"x","lab":"victim"}' > "$1/state.json"`, folder)
	t.Setenv("SVCLAB_WORKSHOP_DIR", folder)

	lab, err := Reset()
	if err == nil || !strings.Contains(err.Error(), StateMarker) {
		t.Errorf("Reset() on nobody's folder = %q, %v; want a refusal naming %s", lab, err, StateMarker)
	}
	for _, f := range []string{filepath.Join(folder, "thesis.txt"), filepath.Join(folder, "state.json"), victim} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s is gone after a refused reset: %v", f, err)
		}
	}
	st := &State{Lesson: "l", Lab: "l"}
	if err := st.Save(); err == nil {
		t.Errorf("svclab saved its state into nobody's folder %s", folder)
	}
	if _, err := os.Stat(filepath.Join(folder, StateMarker)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("svclab marked nobody's folder as its own: %v", err)
	}
}

// TestResetRemovesOnlySvclabsFiles: in the directory svclab made, reset
// removes the files svclab wrote; a file someone else put there is left,
// with the directory, and named in the error; once it is gone, reset
// removes the directory.
func TestResetRemovesOnlySvclabsFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "workshop")
	t.Setenv("SVCLAB_WORKSHOP_DIR", dir)
	if err := (&State{Lesson: "l", Lab: "l"}).Save(); err != nil {
		t.Fatal(err)
	}
	if err := saveStepOutput(0, "step one\n"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the state directory: %v, %v; want mode 0700", fi, err)
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := removeState()
	if err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("removeState with a stranger's file: %v, want an error naming it", err)
	}
	for _, gone := range []string{"state.json", "steps"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left: %v", gone, err)
		}
	}
	if _, err := os.Stat(notes); err != nil {
		t.Errorf("the stranger's file was removed: %v", err)
	}
	os.Remove(notes)
	if err := removeState(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state directory is left after reset: %v", err)
	}
}

// TestAnEmptyFolderIsAdopted: an empty folder (t.TempDir(), a fresh
// mkdir) holds nothing to lose; svclab marks it and uses it.
func TestAnEmptyFolderIsAdopted(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SVCLAB_WORKSHOP_DIR", dir)
	if _, err := Reset(); err != nil {
		t.Fatalf("Reset on an empty folder: %v", err)
	}
	if err := (&State{Lesson: "l", Lab: "l"}).Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, StateMarker)); err != nil {
		t.Errorf("the adopted folder has no marker: %v", err)
	}
}
