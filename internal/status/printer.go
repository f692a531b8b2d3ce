package status

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// Printer announces steps on one writer. It is an io.Writer itself: what a
// step prints goes through it, so that the spinner never garbles a line.
type Printer struct {
	line  *line
	depth int // how deep inside other Printers' steps (its lines are indented)
}

// Options make a Printer without looking at the writer (tests).
type Options struct {
	// Terminal: a spinner line, redrawn on every tick; else plain lines.
	Terminal bool
	// Ticks redraw the spinner (default: every 100 ms).
	Ticks <-chan time.Time
	// Now is the clock elapsed times are read from (default time.Now).
	Now func() time.Time
}

// New returns a Printer on w: a spinner when w is a terminal (an
// *os.File that is one, or a writer whose IsTerminal method says so),
// plain lines otherwise. On a Printer, New returns one on the same line,
// whose steps are indented one level deeper when made while a step of w's
// runs (they are that step's). A nil w prints nothing.
func New(w io.Writer) *Printer {
	if p, ok := w.(*Printer); ok {
		depth := p.depth
		p.line.mu.Lock()
		if len(p.line.running) > 0 {
			depth++ // made inside a running step: its steps are that step's
		}
		p.line.mu.Unlock()
		return &Printer{line: p.line, depth: depth}
	}
	if w == nil {
		w = io.Discard
	}
	return NewWithOptions(w, Options{Terminal: isTerminal(w)})
}

// NewWithOptions returns a Printer on w as opts say.
func NewWithOptions(w io.Writer, opts Options) *Printer {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Printer{line: &line{w: w, terminal: opts.Terminal, ticks: opts.Ticks, now: opts.Now, atLineStart: true}}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	switch t := w.(type) {
	case interface{ IsTerminal() bool }:
		return t.IsTerminal()
	case *os.File:
		return term.IsTerminal(int(t.Fd()))
	}
	return false
}

// Step is one running step.
type Step struct {
	p     *Printer
	name  string
	start time.Time
	ended bool
}

// Start announces the step called name and returns it; End (or Done or
// Fail) ends it.
func (p *Printer) Start(name string) *Step {
	l := p.line
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &Step{p: p, name: name, start: l.now()}
	l.running = append(l.running, s)
	if l.terminal {
		l.draw()
		l.startSpinner()
	} else {
		l.printf("%s• %s ...\n", p.indent(), name)
	}
	return s
}

// Run runs fn as the step called name and returns its error.
func (p *Printer) Run(name string, fn func() error) error {
	s := p.Start(name)
	err := fn()
	s.End(err)
	return err
}

// End marks the step done (err nil) or failed.
func (s *Step) End(err error) {
	if err != nil {
		s.Fail()
		return
	}
	s.Done("")
}

// Done marks the step done, with note (what it made, if anything) after
// its time.
func (s *Step) Done(note string) { s.end(true, note) }

// Fail marks the step failed (its error is the caller's to report).
func (s *Step) Fail() { s.end(false, "") }

func (s *Step) end(ok bool, note string) {
	l := s.p.line
	l.mu.Lock()
	if s.ended {
		l.mu.Unlock()
		return
	}
	s.ended = true
	for i, r := range l.running {
		if r == s {
			l.running = append(l.running[:i], l.running[i+1:]...)
			break
		}
	}
	mark := "✓"
	if !ok {
		mark = "✗"
	}
	if l.terminal {
		l.clear()
		if ok {
			mark = "\x1b[32m✓\x1b[0m"
		} else {
			mark = "\x1b[31m✗\x1b[0m"
		}
	}
	msg := fmt.Sprintf("%s%s %s (%s)", s.p.indent(), mark, s.name, took(l.now().Sub(s.start)))
	if note != "" {
		msg += ": " + note
	}
	l.printf("%s\n", msg)
	var stopped chan struct{}
	if l.terminal {
		if len(l.running) > 0 {
			l.draw()
		} else {
			stopped = l.stopSpinner()
		}
	}
	l.mu.Unlock()
	if stopped != nil {
		<-stopped // no frame is drawn after the last step's line
	}
}

// Write writes what a step prints, clearing the spinner's line first (the
// next tick draws it again, below).
func (p *Printer) Write(b []byte) (int, error) {
	l := p.line
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.terminal {
		l.clear()
	}
	n, err := l.w.Write(b)
	if n > 0 {
		l.atLineStart = b[n-1] == '\n'
	}
	if l.terminal && len(l.running) > 0 && l.atLineStart {
		l.draw()
	}
	return n, err
}

func (p *Printer) indent() string { return strings.Repeat("  ", p.depth) + " " }

// took is a finished step's time: to the millisecond under a second, the
// tenth of a second under a minute, the second beyond.
func took(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
