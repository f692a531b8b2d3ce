package proxy

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/svclab/svclab/proxy/model"
)

// conntrackRecorder is a Loop.CleanConntrack that records the snapshots
// it is given and fails when told to.
type conntrackRecorder struct {
	mu    sync.Mutex
	snaps []*model.Snapshot
	fail  bool
}

func (r *conntrackRecorder) clean(snap *model.Snapshot) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snaps = append(r.snaps, snap)
	if r.fail {
		return 0, errors.New("netlink: operation not permitted")
	}
	return 1, nil
}

func (r *conntrackRecorder) cleaned() []*model.Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*model.Snapshot(nil), r.snaps...)
}

// TestLoopCleansConntrackAfterSuccessfulSyncs: the stale UDP flows are
// cleaned after every successful sync, with the snapshot the backend
// synced, before the outcome is reported; never after a failed sync; and
// a cleanup that fails does not fail the sync.
func TestLoopCleansConntrackAfterSuccessfulSyncs(t *testing.T) {
	src, be, ct := &fakeSource{}, &fakeBackend{}, &conntrackRecorder{}
	ch := startLoop(t, &Loop{Source: src, Backend: be, SyncPeriod: time.Hour, RetryPeriod: 10 * time.Millisecond, CleanConntrack: ct.clean})

	if o := next(t, ch); o.Err != nil {
		t.Fatalf("first sync: %v", o.Err)
	}
	if got := ct.cleaned(); len(got) != 1 || got[0] != be.snapshots[0] {
		t.Fatalf("after the first sync's outcome: cleaned %d snapshots, want 1, the synced one", len(got))
	}

	be.mu.Lock()
	be.failNext = 1
	be.mu.Unlock()
	src.change()
	if o := next(t, ch); o.Err == nil {
		t.Fatal("the second sync should have failed")
	}
	if got := ct.cleaned(); len(got) != 1 {
		t.Fatalf("after a failed sync: cleaned %d times, want still 1", len(got))
	}

	ct.mu.Lock()
	ct.fail = true
	ct.mu.Unlock()
	if o := next(t, ch); o.Err != nil {
		t.Fatalf("the retry: %v; a failed cleanup must not fail the sync", o.Err)
	}
	if got := ct.cleaned(); len(got) != 2 {
		t.Fatalf("after the retry: cleaned %d times, want 2", len(got))
	}
}
