package cmdrun

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Error is a command that failed: its argv, its combined output and the
// underlying error (usually an *exec.ExitError).
type Error struct {
	Args   []string
	Output string
	Err    error
}

// ErrorOutputBytes is how much of a failed command's output its Error
// keeps: the end, where the reason usually is.
const ErrorOutputBytes = 4000

// Error is the command line, the underlying error and the tail of the
// output (ErrorOutputBytes).
func (e *Error) Error() string {
	out := Tail(strings.TrimSpace(e.Output), ErrorOutputBytes)
	if out == "" {
		return fmt.Sprintf("%s: %v", strings.Join(e.Args, " "), e.Err)
	}
	return fmt.Sprintf("%s: %v\n%s", strings.Join(e.Args, " "), e.Err, out)
}

// Unwrap is the underlying error (errors.As finds an *exec.ExitError).
func (e *Error) Unwrap() error { return e.Err }

// Tail returns the last n bytes of s, marked with "…" when it was longer.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// Cmd describes a command: argv, extra environment, stdin, and a directory.
type Cmd struct {
	Args  []string
	Env   []string // added to the process's environment
	Stdin io.Reader
	Dir   string
	// Stdout, when set, receives stdout instead of the returned output
	// (for large streams such as docker save).
	Stdout io.Writer
	// StopSignal, when set, is what the command gets when its context is
	// done, instead of SIGKILL; it is killed if it has not exited
	// StopGrace later (apt-get gets SIGTERM, so that dpkg finishes the
	// step it is in).
	StopSignal os.Signal
	StopGrace  time.Duration
}

// Command is the usual constructor.
func Command(args ...string) Cmd { return Cmd{Args: args} }

// WithEnv returns c with env added.
func (c Cmd) WithEnv(env ...string) Cmd {
	c.Env = append(append([]string{}, c.Env...), env...)
	return c
}

// WithStdin returns c reading stdin from r.
func (c Cmd) WithStdin(r io.Reader) Cmd { c.Stdin = r; return c }

// WithDir returns c run in dir.
func (c Cmd) WithDir(dir string) Cmd { c.Dir = dir; return c }

// WithStdout returns c writing stdout to w.
func (c Cmd) WithStdout(w io.Writer) Cmd { c.Stdout = w; return c }

// WithStopSignal returns c stopped, when its context is done, by sig,
// and killed only if it is still running grace later.
func (c Cmd) WithStopSignal(sig os.Signal, grace time.Duration) Cmd {
	c.StopSignal, c.StopGrace = sig, grace
	return c
}

// String is the command as a shell line (for logs and errors).
func (c Cmd) String() string { return strings.Join(c.Args, " ") }

// Exec builds the *exec.Cmd.
func (c Cmd) Exec(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	if len(c.Env) > 0 {
		cmd.Env = append(cmd.Environ(), c.Env...)
	}
	cmd.Stdin = c.Stdin
	cmd.Dir = c.Dir
	if c.StopSignal != nil {
		cmd.Cancel = func() error { return cmd.Process.Signal(c.StopSignal) }
		cmd.WaitDelay = c.StopGrace
	}
	return cmd
}

// Output runs the command and returns its stdout. On failure the error is
// an *Error with stdout and stderr.
func (c Cmd) Output(ctx context.Context) ([]byte, error) {
	cmd := c.Exec(ctx)
	var stdout bytes.Buffer
	both := &lockedBuffer{}
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	} else {
		cmd.Stdout = io.MultiWriter(&stdout, both)
	}
	cmd.Stderr = both
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &Error{Args: c.Args, Output: both.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// lockedBuffer is the output an Error keeps: stdout and stderr are copied
// into it by two goroutines of os/exec (they are two pipes).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Run runs the command, discarding its output unless it fails.
func (c Cmd) Run(ctx context.Context) error {
	_, err := c.Output(ctx)
	return err
}

// Text runs the command and returns its trimmed stdout.
func (c Cmd) Text(ctx context.Context) (string, error) {
	out, err := c.Output(ctx)
	return strings.TrimSpace(string(out)), err
}
