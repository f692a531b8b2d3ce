package tour

import (
	"bytes"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens the master side of a new pseudo-terminal (like
// posix_openpt(3)), a terminal that needs no controlling tty.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to test with: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestUseColor(t *testing.T) {
	pty := openPTY(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()

	t.Setenv("NO_COLOR", "")
	if !useColor(pty) {
		t.Error("a terminal with NO_COLOR unset: no colour, want colour")
	}
	if useColor(w) {
		t.Error("a pipe: colour, want none")
	}
	if useColor(&bytes.Buffer{}) {
		t.Error("a buffer: colour, want none")
	}

	// NO_COLOR set to anything non-empty turns colour off, even on a terminal.
	for _, v := range []string{"1", "0", "false", "yes"} {
		t.Setenv("NO_COLOR", v)
		if useColor(pty) {
			t.Errorf("a terminal with NO_COLOR=%q: colour, want none", v)
		}
	}
	os.Unsetenv("NO_COLOR") // restored by t.Setenv's cleanup
	if !useColor(pty) {
		t.Error("a terminal without NO_COLOR: no colour, want colour")
	}
}
