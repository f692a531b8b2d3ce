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
	bin  string
	err  error
}

// SharedBinary is Binary for a whole test binary: $SVCLAB_BIN, or one svclab
// built once into a temporary directory and shared by every test after.
func SharedBinary(tb testing.TB) string {
	tb.Helper()
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
		shared.bin, shared.err = Binary(dir)
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.bin
}
