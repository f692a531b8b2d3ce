// Package golden compares a test's whole output with a file under the
// package's testdata/, and rewrites the file when the test runs with
// -update (`go test ./pkg -update`): every golden test of svclab uses it,
// so the flag and the failure message are the same everywhere. LineDiff,
// what a failure shows, also serves tests that compare two outputs.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of every test binary that imports golden.
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// Updating reports whether the test runs with -update.
func Updating() bool { return *update }

// Check compares got with testdata/name, or writes it there under -update.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	CheckPath(t, filepath.Join("testdata", name), got)
}

// CheckPath is Check for a file anywhere, such as a picture under docs/
// that the README shows. A difference fails the test and shows LineDiff.
func CheckPath(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it):\n%s", path, LineDiff(string(want), string(got)))
	}
}
