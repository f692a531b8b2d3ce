package cmdrun

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOutputIsStdout: Output returns stdout alone; Text trims it.
func TestOutputIsStdout(t *testing.T) {
	out, err := Command("sh", "-c", "echo out; echo err >&2").Output(context.Background())
	if err != nil || string(out) != "out\n" {
		t.Fatalf("Output = %q, %v; want %q", out, err, "out\n")
	}
	if text, err := Command("echo", " padded ").Text(context.Background()); err != nil || text != "padded" {
		t.Errorf("Text = %q, %v; want %q", text, err, "padded")
	}
}

// TestErrorKeepsCommandAndOutput: a failure is an *Error naming the
// command, wrapping the exit error, with both stdout and stderr (two
// pipes: their relative order is not kept).
func TestErrorKeepsCommandAndOutput(t *testing.T) {
	err := Command("sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3").Run(context.Background())
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Run = %v; want an *Error", err)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("the error does not wrap the exit status 3: %v", err)
	}
	lines := strings.Fields(cerr.Output)
	slices.Sort(lines)
	if !slices.Equal(lines, []string{"to-stderr", "to-stdout"}) {
		t.Errorf("Output = %q; want both lines", cerr.Output)
	}
	if want := "sh -c echo to-stdout; echo to-stderr >&2; exit 3: exit status 3\n"; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "to-stderr") {
		t.Errorf("Error() = %q; want it to start %q and hold the output", err.Error(), want)
	}
}

// TestErrorOutputUnderConcurrentWrites: stdout and stderr written at once
// all reach the Error (go test -race checks the buffer is guarded).
func TestErrorOutputUnderConcurrentWrites(t *testing.T) {
	script := `for i in $(seq 200); do echo out$i; done & for i in $(seq 200); do echo err$i >&2; done; wait; exit 1`
	_, err := Command("sh", "-c", script).Output(context.Background())
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Output = %v; want an *Error", err)
	}
	if n := len(strings.Fields(cerr.Output)); n != 400 {
		t.Errorf("the Error kept %d lines of 400", n)
	}
}

// TestErrorKeepsTheTail: a long output is cut to its end.
func TestErrorKeepsTheTail(t *testing.T) {
	long := strings.Repeat("x", 2*ErrorOutputBytes) + "the reason"
	msg := (&Error{Args: []string{"prog"}, Output: long, Err: errors.New("exit status 1")}).Error()
	if !strings.HasSuffix(msg, "the reason") || !strings.Contains(msg, "…") || len(msg) > ErrorOutputBytes+100 {
		t.Errorf("Error() keeps %d bytes, ends %q; want the last %d bytes marked as cut", len(msg), Tail(msg, 20), ErrorOutputBytes)
	}
	if got := (&Error{Args: []string{"prog", "a"}, Err: errors.New("boom")}).Error(); got != "prog a: boom" {
		t.Errorf("without output: %q", got)
	}
}

func TestTail(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"abc", 3, "abc"}, {"abcdef", 2, "…ef"}, {"", 1, ""}} {
		if got := Tail(c.in, c.n); got != c.want {
			t.Errorf("Tail(%q, %d) = %q; want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestEnvDirStdinStdout: the builders reach the process.
func TestEnvDirStdinStdout(t *testing.T) {
	dir := t.TempDir()
	var stdout strings.Builder
	c := Command("sh", "-c", `echo "$CMDRUN_TEST $(pwd)"; cat`).
		WithEnv("CMDRUN_TEST=set").WithDir(dir).WithStdin(strings.NewReader("from stdin\n")).WithStdout(&stdout)
	out, err := c.Output(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 0 {
		t.Errorf("Output returned %q although stdout went to the writer", out)
	}
	if want := "set " + dir + "\nfrom stdin\n"; stdout.String() != want {
		t.Errorf("stdout = %q; want %q", stdout.String(), want)
	}
	if c.String() != `sh -c echo "$CMDRUN_TEST $(pwd)"; cat` {
		t.Errorf("String() = %q", c.String())
	}
}

// TestWithEnvDoesNotShare: WithEnv copies, so two commands made from one
// do not see each other's variables.
func TestWithEnvDoesNotShare(t *testing.T) {
	base := Command("true").WithEnv("A=1")
	a, b := base.WithEnv("B=2"), base.WithEnv("C=3")
	if strings.Join(a.Env, ",") != "A=1,B=2" || strings.Join(b.Env, ",") != "A=1,C=3" {
		t.Errorf("a.Env = %v, b.Env = %v", a.Env, b.Env)
	}
}

// TestStopSignal: a command with a stop signal gets it (here SIGTERM,
// which its trap reports) when its context is done, instead of SIGKILL.
func TestStopSignal(t *testing.T) {
	for _, c := range []struct {
		name     string
		cmd      func(Cmd) Cmd
		wantTrap bool
	}{
		{"default SIGKILL", func(c Cmd) Cmd { return c }, false},
		{"SIGTERM", func(c Cmd) Cmd { return c.WithStopSignal(syscall.SIGTERM, time.Minute) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := io.Pipe()
			script := `trap 'echo trapped TERM >&2; kill $!; exit 7' TERM; sleep 300 </dev/null >/dev/null 2>&1 & echo ready; wait`
			done := make(chan error, 1)
			go func() {
				_, err := c.cmd(Command("sh", "-c", script)).WithStdout(pw).Output(ctx)
				pw.Close()
				done <- err
			}()
			if line, err := bufio.NewReader(pr).ReadString('\n'); err != nil || line != "ready\n" {
				t.Fatalf("first line %q, %v", line, err)
			}
			cancel()
			go io.Copy(io.Discard, pr)
			err := <-done
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("Output = %v; want an *Error", err)
			}
			if trapped := strings.Contains(cerr.Output, "trapped TERM"); trapped != c.wantTrap {
				t.Errorf("trap ran: %v, want %v (output %q, error %v)", trapped, c.wantTrap, cerr.Output, err)
			}
		})
	}
}
