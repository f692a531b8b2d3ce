package roottest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RecordExecs puts a program called name first in PATH, for the rest of
// the test, that logs its arguments and runs realPath (the program's own
// path, looked up before). The returned func hands out, and forgets, the
// argument lines of the runs so far: how tests count what a runner execs.
func RecordExecs(t *testing.T, name, realPath string) func() []string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "execs")
	shim := fmt.Sprintf("#!/bin/sh\necho \"$*\" >>%s\nexec %s \"$@\"\n", log, realPath)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() []string {
		data, err := os.ReadFile(log)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(log)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
}
