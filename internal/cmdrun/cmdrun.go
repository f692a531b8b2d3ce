package cmdrun

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// Error is a command that failed: its argv, its combined output and the
// underlying error (usually an *exec.ExitError).
type Error struct {
	Args   []string
	Output string
	Err    error
}

func (e *Error) Error() string {
	out := strings.TrimSpace(e.Output)
	const max = 4000
	if len(out) > max {
		out = "…" + out[len(out)-max:]
	}
	if out == "" {
		return fmt.Sprintf("%s: %v", strings.Join(e.Args, " "), e.Err)
	}
	return fmt.Sprintf("%s: %v\n%s", strings.Join(e.Args, " "), e.Err, out)
}

func (e *Error) Unwrap() error { return e.Err }

// Cmd describes a command: argv, extra environment, stdin, and a directory.
type Cmd struct {
	Args  []string
	Env   []string // added to the process's environment
	Stdin io.Reader
	Dir   string
	// Stdout, when set, receives stdout instead of the returned output
	// (for large streams such as docker save).
	Stdout io.Writer
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
	return cmd
}

// Output runs the command and returns its stdout. On failure the error is
// an *Error with stdout and stderr.
func (c Cmd) Output(ctx context.Context) ([]byte, error) {
	cmd := c.Exec(ctx)
	var stdout, both bytes.Buffer
	if c.Stdout != nil {
		cmd.Stdout = io.MultiWriter(c.Stdout)
	} else {
		cmd.Stdout = io.MultiWriter(&stdout, &both)
	}
	cmd.Stderr = &both
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &Error{Args: c.Args, Output: both.String(), Err: err}
	}
	return stdout.Bytes(), nil
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
