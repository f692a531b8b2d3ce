package workshop

import (
	"testing"

	"github.com/svclab/svclab/internal/golden"
)

// golden compares got with testdata/name (go test -update rewrites it).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, []byte(got))
}
