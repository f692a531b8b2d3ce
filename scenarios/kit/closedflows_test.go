package kit

import (
	"testing"
	"time"

	"github.com/svclab/svclab/labs/agents/traffic"
)

// TestRunClockEndedBefore checks the lower bound on how long before a
// conntrack dump a connection ended: what is left of the run after it,
// by the client's clock, plus the time from after the run to the dump,
// by the suite's.
func TestRunClockEndedBefore(t *testing.T) {
	after := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	run := RunClock{Elapsed: 10600 * time.Millisecond, After: after}
	for _, tt := range []struct {
		name   string
		conn   traffic.Connection
		dumped time.Time
		want   time.Duration
		closed bool // ClosedLongEnough
	}{
		{"early connection, dump right after the run", traffic.Connection{Start: 900 * time.Millisecond, Duration: 22 * time.Millisecond},
			after, 9678 * time.Millisecond, false},
		{"early connection, dump 400 ms later", traffic.Connection{Start: 900 * time.Millisecond, Duration: 22 * time.Millisecond},
			after.Add(400 * time.Millisecond), 10078 * time.Millisecond, true},
		{"the run's last connection", traffic.Connection{Start: 10500 * time.Millisecond, Duration: 100 * time.Millisecond},
			after.Add(time.Second), time.Second, false},
		{"exactly CloseTimeout", traffic.Connection{Start: 0, Duration: 600 * time.Millisecond},
			after, CloseTimeout, true},
	} {
		if got := run.EndedBefore(tt.conn, tt.dumped); got != tt.want {
			t.Errorf("%s: ended %s before the dump, want %s", tt.name, got, tt.want)
		}
		if got := run.ClosedLongEnough(tt.conn, tt.dumped); got != tt.closed {
			t.Errorf("%s: ClosedLongEnough = %v, want %v", tt.name, got, tt.closed)
		}
	}
}
