package workshop

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLessonsDirInsideTheCheckout: below the checkout, the lessons are its
// clusters/lessons (what a lesson's author edits).
func TestLessonsDirInsideTheCheckout(t *testing.T) {
	want := lessonsDir(t)
	t.Chdir(filepath.Join(want, "seed-001-ladder"))
	if got, err := LessonsDir(); err != nil || got != want {
		t.Fatalf("LessonsDir = %q, %v; want the checkout's %s", got, err, want)
	}
}

// TestLessonsDirOutsideTheCheckout: elsewhere, the lessons built into the
// binary, on disk in a private folder, and they are the checkout's.
func TestLessonsDirOutsideTheCheckout(t *testing.T) {
	checkout, err := ListLessons(lessonsDir(t))
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	t.Setenv("SVCLAB_STATE_DIR", filepath.Join(state, "labs")) // root's built-in files go beside it
	t.Setenv("XDG_CACHE_HOME", filepath.Join(state, "cache"))  // others'
	t.Chdir(t.TempDir())
	dir, err := LessonsDir()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(dir, state+string(filepath.Separator)) || filepath.Base(dir) != "lessons" {
		t.Fatalf("LessonsDir = %s, want a lessons folder under %s", dir, state)
	}
	builtIn, err := ListLessons(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := func(ls []*Lesson) (out []string) {
		for _, l := range ls {
			out = append(out, l.Metadata.Name)
		}
		return out
	}
	if !slices.Equal(names(builtIn), names(checkout)) || len(builtIn) == 0 {
		t.Fatalf("built-in lessons %v, the checkout's %v", names(builtIn), names(checkout))
	}
	l, err := FindLesson(dir, "seed-001-ladder")
	if err != nil || !strings.HasPrefix(l.LabFile, filepath.Dir(dir)) {
		t.Fatalf("FindLesson: %+v, %v; want its lab file among the built-in files", l, err)
	}
}
