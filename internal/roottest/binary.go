package roottest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Binary returns the svclab executable the labs run: $SVCLAB_BIN (make test
// sets it to bin/svclab), else one built now into dir.
func Binary(dir string) (string, error) {
	if bin := os.Getenv("SVCLAB_BIN"); bin != "" {
		return bin, nil
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	out := filepath.Join(dir, "svclab")
	cmd := exec.Command("go", "build", "-o", out, "./tools/svclab")
	cmd.Dir = root
	if data, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building svclab: %v\n%s", err, data)
	}
	return out, nil
}

var shared struct {
	once sync.Once
	main bool   // Main runs the tests
	dir  string // the directory svclab was built into, removed by Main
	bin  string
	err  error
}

// Main runs the tests of a package that uses SharedBinary (its TestMain:
// os.Exit(roottest.Main(m))), then removes the svclab that SharedBinary
// built for them: about 100 MB in $TMPDIR per package and run otherwise.
func Main(m *testing.M) int {
	shared.main = true
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir) //nolint:errcheck // a temporary directory of the tests' own
	}
	return code
}

// SharedBinary is Binary for a whole test binary: $SVCLAB_BIN, or one svclab
// built once into a temporary directory, shared by every test after and
// removed when they end. The package's TestMain must call Main, which
// removes it; a package without one fails here, with or without
// $SVCLAB_BIN, so that no package forgets.
func SharedBinary(tb testing.TB) string {
	tb.Helper()
	if !shared.main {
		tb.Fatal("roottest.SharedBinary: the package needs func TestMain(m *testing.M) { os.Exit(roottest.Main(m)) }, which removes the svclab it builds")
	}
	shared.once.Do(func() {
		if bin := os.Getenv("SVCLAB_BIN"); bin != "" {
			shared.bin = bin // no build, so no directory to leave behind
			return
		}
		dir, err := os.MkdirTemp("", "svclab-bin-")
		if err != nil {
			shared.err = err
			return
		}
		shared.dir = dir
		shared.bin, shared.err = Binary(dir)
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.bin
}
