package status

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a fake clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

// TestPipedIsAStartAndAnEndLinePerStep: on a pipe, every step is its
// start line and its end line; what a step prints goes between them;
// nested steps are indented.
func TestPipedIsAStartAndAnEndLinePerStep(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	p := NewWithOptions(&out, Options{Now: c.now})
	outer := p.Start("build the node image")
	inner := New(p)
	if err := inner.Run("kubernetes binaries v1.36.4", func() error {
		fmt.Fprintln(inner, "go build ./cmd/kubeadm")
		c.add(6*time.Minute + 12*time.Second + 300*time.Millisecond)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s := inner.Start("node rootfs trixie")
	c.add(1500 * time.Millisecond)
	s.Done("cached /var/cache/svclab/rootfs")
	failed := errors.New("no space left")
	if err := inner.Run("node image", func() error { c.add(42 * time.Millisecond); return failed }); err != failed {
		t.Fatalf("Run returned %v, want fn's error", err)
	}
	outer.End(failed)
	outer.End(nil) // a second end changes nothing
	want := ` • build the node image ...
   • kubernetes binaries v1.36.4 ...
go build ./cmd/kubeadm
   ✓ kubernetes binaries v1.36.4 (6m12s)
   • node rootfs trixie ...
   ✓ node rootfs trixie (1.5s): cached /var/cache/svclab/rootfs
   • node image ...
   ✗ node image (42ms)
 ✗ build the node image (6m13.842s)
`
	want = strings.Replace(want, "(6m13.842s)", "(6m14s)", 1)
	if out.String() != want {
		t.Errorf("piped output:\n%s\nwant:\n%s", out.String(), want)
	}
}

// fakeTerminal is a writer that says it is a terminal, as New asks, and
// counts its writes so that a test can wait for the spinner's.
type fakeTerminal struct {
	mu     sync.Mutex
	wrote  *sync.Cond
	buf    bytes.Buffer
	writes int
}

func newFakeTerminal() *fakeTerminal {
	f := &fakeTerminal{}
	f.wrote = sync.NewCond(&f.mu)
	return f
}

func (f *fakeTerminal) IsTerminal() bool { return true }
func (f *fakeTerminal) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	f.wrote.Broadcast()
	return f.buf.Write(b)
}

// count is how many writes there were.
func (f *fakeTerminal) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

// waitFor waits until there were n writes.
func (f *fakeTerminal) waitFor(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.writes < n {
		f.wrote.Wait()
	}
}

// take returns what was written since the last take.
func (f *fakeTerminal) take() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.buf.String()
	f.buf.Reset()
	return s
}

// ticker sends one tick and waits for the frame it draws (one write).
func ticker(term *fakeTerminal, ticks chan<- time.Time) func() {
	return func() {
		n := term.count()
		ticks <- time.Time{}
		term.waitFor(n + 1)
	}
}

// frame is the spinner's line for frame i showing steps.
func frame(i int, steps string) string {
	return "\x1b[?7l\r" + frames[i] + " " + steps + "\x1b[K\x1b[?7h"
}

const clearLine = "\r\x1b[K"

// TestTerminalSpinsWithTheElapsedTime: on a terminal, a step shows at once
// on the spinner's line; each tick redraws it with the elapsed time of
// every running step; a step's own line clears it first and redraws it;
// an ended step leaves its coloured mark; after the last, nothing spins.
func TestTerminalSpinsWithTheElapsedTime(t *testing.T) {
	term := newFakeTerminal()
	c := newClock()
	ticks := make(chan time.Time)
	p := New(term)
	if !p.line.terminal {
		t.Fatal("New on a writer whose IsTerminal says so: want the spinner")
	}
	p = NewWithOptions(term, Options{Terminal: true, Ticks: ticks, Now: c.now})
	tick := ticker(term, ticks)

	a := p.Start("kubernetes binaries")
	if got, want := term.take(), frame(0, "kubernetes binaries 0s"); got != want {
		t.Fatalf("Start: %q, want the spinner's line at once %q", got, want)
	}
	c.add(2500 * time.Millisecond)
	tick()
	if got, want := term.take(), frame(1, "kubernetes binaries 2s"); got != want {
		t.Fatalf("a tick: %q, want %q", got, want)
	}
	b := New(p).Start("node rootfs")
	if got, want := term.take(), frame(1, "kubernetes binaries 2s · node rootfs 0s"); got != want {
		t.Fatalf("a second step: %q, want %q", got, want)
	}
	fmt.Fprintln(p, "go: downloading k8s.io/kubernetes")
	if got, want := term.take(), clearLine+"go: downloading k8s.io/kubernetes\n"+frame(1, "kubernetes binaries 2s · node rootfs 0s"); got != want {
		t.Fatalf("a step's line: %q, want %q", got, want)
	}
	c.add(61 * time.Second)
	b.Done("built")
	if got, want := term.take(), clearLine+"   \x1b[32m✓\x1b[0m node rootfs (1m1s): built\n"+frame(1, "kubernetes binaries 1m3s"); got != want {
		t.Fatalf("the second step ends: %q, want %q", got, want)
	}
	tick()
	if got, want := term.take(), frame(2, "kubernetes binaries 1m3s"); got != want {
		t.Fatalf("a tick: %q, want %q", got, want)
	}
	a.Fail()
	if got, want := term.take(), clearLine+" \x1b[31m✗\x1b[0m kubernetes binaries (1m4s)\n"; got != want {
		t.Fatalf("the last step ends: %q, want %q", got, want)
	}
	select {
	case ticks <- time.Time{}:
		t.Fatal("the spinner still takes ticks after the last step")
	default:
	}
	if got := term.take(); got != "" {
		t.Fatalf("after the last step: %q, want nothing", got)
	}
}

// TestTerminalHalfLine: a step's line written in pieces is not cut by the
// spinner: a tick meanwhile draws nothing, and the line is redrawn when
// the step's line is complete. (The ticks are the line's own, called here:
// no goroutine races the writes.)
func TestTerminalHalfLine(t *testing.T) {
	term := newFakeTerminal()
	p := NewWithOptions(term, Options{Terminal: true, Ticks: make(chan time.Time), Now: newClock().now})
	s := p.Start("x")
	term.take()
	fmt.Fprint(p, "half ")
	p.line.tick()
	if got := term.take(); got != clearLine+"half " {
		t.Fatalf("a tick in a half-written line: %q, want the half line alone", got)
	}
	fmt.Fprint(p, "line\n")
	if got, want := term.take(), "line\n"+frame(1, "x 0s"); got != want {
		t.Fatalf("the rest of the line: %q, want %q", got, want)
	}
	s.Done("")
}

// TestStepsFromGoroutines: steps of several goroutines at once each get
// their two lines, whole.
func TestStepsFromGoroutines(t *testing.T) {
	var out bytes.Buffer
	p := NewWithOptions(&out, Options{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { p.Start(fmt.Sprintf("step %d", i)).Done("") })
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 16 {
		t.Fatalf("%d lines, want 16:\n%s", len(lines), out.String())
	}
	for i := range 8 {
		if !strings.Contains(out.String(), fmt.Sprintf(" • step %d ...\n", i)) || !strings.Contains(out.String(), fmt.Sprintf(" ✓ step %d (", i)) {
			t.Errorf("step %d lacks a line:\n%s", i, out.String())
		}
	}
}

func TestNewOnAPipeIsPlain(t *testing.T) {
	if New(&bytes.Buffer{}).line.terminal {
		t.Error("a buffer: want plain lines")
	}
	New(nil).Start("quiet").Done("") // prints nowhere, fails nowhere
}

// TestNestedOnlyInsideAStep: a Printer made on a Printer with no step
// running prints at the same level; made inside a step, one deeper.
func TestNestedOnlyInsideAStep(t *testing.T) {
	var out bytes.Buffer
	p := NewWithOptions(&out, Options{Now: newClock().now})
	New(p).Start("beside").Done("")
	s := p.Start("outer")
	New(p).Start("inner").Done("")
	s.Done("")
	want := " • beside ...\n ✓ beside (0s)\n • outer ...\n   • inner ...\n   ✓ inner (0s)\n ✓ outer (0s)\n"
	if out.String() != want {
		t.Errorf("%q, want %q", out.String(), want)
	}
}
