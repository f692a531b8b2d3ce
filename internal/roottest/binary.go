package roottest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
