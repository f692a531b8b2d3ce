package status

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// frames are kind's spinner (pkg/internal/cli/spinner.go).
var frames = []string{"⠈⠁", "⠈⠑", "⠈⠱", "⠈⡱", "⢀⡱", "⢄⡱", "⢄⡱", "⢆⡱", "⢎⡱", "⢎⡰", "⢎⡠", "⢎⡀", "⢎⠁", "⠎⠁", "⠊⠁"}

// frameInterval is how often the spinner is redrawn.
const frameInterval = 100 * time.Millisecond

// line is what the Printers on one writer share: the writer, the running
// steps (in the order they started) and, on a terminal, the spinner.
type line struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	ticks    <-chan time.Time // nil: a ticker of frameInterval
	now      func() time.Time

	running     []*Step
	drawn       bool // the spinner's line is on the screen
	atLineStart bool // the last byte written ended a line
	frame       int
	stop        chan struct{} // closes to stop the spinner's goroutine; nil when none runs
	stopped     chan struct{} // closed when it has
}

// printf writes to the writer (l.mu held).
func (l *line) printf(format string, args ...any) {
	fmt.Fprintf(l.w, format, args...)
	l.atLineStart = true
}

// draw writes the spinner's line: a frame, then every running step with
// its elapsed time; line wrapping is off while it is written, so a line
// wider than the terminal is cut, never wrapped (l.mu held).
func (l *line) draw() {
	if !l.atLineStart && !l.drawn {
		return // a step is in the middle of a line of its own
	}
	var parts []string
	now := l.now()
	for _, s := range l.running {
		parts = append(parts, fmt.Sprintf("%s %s", s.name, now.Sub(s.start).Truncate(time.Second)))
	}
	fmt.Fprintf(l.w, "\x1b[?7l\r%s %s\x1b[K\x1b[?7h", frames[l.frame%len(frames)], strings.Join(parts, " · "))
	l.drawn = true
}

// clear erases the spinner's line if it is drawn (l.mu held).
func (l *line) clear() {
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
}

// tick draws the next frame.
func (l *line) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.running) == 0 {
		return
	}
	l.frame++
	l.draw()
}

// startSpinner starts the goroutine that redraws the line on every tick,
// unless it runs (l.mu held).
func (l *line) startSpinner() {
	if l.stop != nil {
		return
	}
	l.stop, l.stopped = make(chan struct{}), make(chan struct{})
	ticks, ticker := l.ticks, (*time.Ticker)(nil)
	if ticks == nil {
		ticker = time.NewTicker(frameInterval)
		ticks = ticker.C
	}
	go func(stop, stopped chan struct{}) {
		defer close(stopped)
		if ticker != nil {
			defer ticker.Stop()
		}
		for {
			select {
			case <-stop:
				return
			case <-ticks:
				l.tick()
			}
		}
	}(l.stop, l.stopped)
}

// stopSpinner tells the goroutine to stop and returns the channel closed
// when it has (l.mu held: wait after unlocking).
func (l *line) stopSpinner() chan struct{} {
	if l.stop == nil {
		return nil
	}
	close(l.stop)
	stopped := l.stopped
	l.stop, l.stopped = nil, nil
	return stopped
}
