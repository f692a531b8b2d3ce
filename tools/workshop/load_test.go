package workshop

import (
	"os"
	"path/filepath"
	"testing"
)

// lessonsDir is the checkout's clusters/lessons.
func lessonsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "clusters", "lessons"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestEveryLessonLoads loads every lesson of the checkout.
func TestEveryLessonLoads(t *testing.T) {
	entries, err := os.ReadDir(lessonsDir(t))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		if _, err := Load(filepath.Join(lessonsDir(t), e.Name())); err != nil {
			t.Error(err)
		}
	}
	if n == 0 {
		t.Error("no lesson under clusters/lessons")
	}
}
