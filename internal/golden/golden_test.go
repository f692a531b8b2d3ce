package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records whether the check failed.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestCheckComparesWithTheFile(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "x.golden"), []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, got string
		fail      bool
	}{{"x.golden", "same\n", false}, {"x.golden", "other\n", true}, {"missing.golden", "", true}} {
		r := &recorder{TB: t}
		Check(r, tc.name, []byte(tc.got))
		if r.failed != tc.fail {
			t.Errorf("Check(%s, %q): failed %v, want %v", tc.name, tc.got, r.failed, tc.fail)
		}
	}
}

func TestLineDiff(t *testing.T) {
	for _, tc := range []struct{ name, want, got, diff string }{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"changed line", "a\nb\nc\n", "a\nB\nc\n", "first difference at line 2:\n- b\n+ B\n- b\n+ B\n"},
		{"extra repeat", "a\n", "a\na\n", "first difference at line 2:\n- \n+ a\n+ a\n"},
		{"reordered", "a\nb", "b\na", "first difference at line 1:\n- a\n+ b\n(the same lines in another order)\n"},
	} {
		if got := LineDiff(tc.want, tc.got); got != tc.diff {
			t.Errorf("%s: LineDiff = %q, want %q", tc.name, got, tc.diff)
		}
	}
}
