package nldump

import (
	"errors"
	"testing"

	"github.com/vishvananda/netlink"
)

// TestRetryRepeatsOnlyInterruptedDumps: an interrupted dump runs again
// until it is not, and its result is the uninterrupted one; another error
// returns at once; a dump interrupted every time stops after Attempts.
func TestRetryRepeatsOnlyInterruptedDumps(t *testing.T) {
	calls := 0
	got, err := Retry(func() ([]string, error) {
		calls++
		if calls < 3 {
			return []string{"partial"}, netlink.ErrDumpInterrupted
		}
		return []string{"a", "b"}, nil
	})
	if err != nil || len(got) != 2 || calls != 3 {
		t.Errorf("interrupted twice: %v, %v after %d calls; want [a b], nil after 3", got, err, calls)
	}

	calls = 0
	boom := errors.New("operation not permitted")
	if _, err := Retry(func() (int, error) { calls++; return 0, boom }); !errors.Is(err, boom) || calls != 1 {
		t.Errorf("other error: %v after %d calls; want it after 1", err, calls)
	}

	calls = 0
	got, err = Retry(func() ([]string, error) { calls++; return []string{"partial"}, netlink.ErrDumpInterrupted })
	if !errors.Is(err, netlink.ErrDumpInterrupted) || calls != Attempts || len(got) != 1 {
		t.Errorf("always interrupted: %v, %v after %d calls; want the last partial result and the error after %d", got, err, calls, Attempts)
	}
}
