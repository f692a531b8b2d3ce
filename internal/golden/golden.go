// Package golden compares a test's whole output with a file under the
// package's testdata/, and rewrites the file when the test runs with
// -update: the golden tests of svclab's pure renderers use it.
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
// A difference fails the test and prints the whole output.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
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
		t.Errorf("%s differs from the output (go test -update rewrites it); got:\n%s", path, got)
	}
}
