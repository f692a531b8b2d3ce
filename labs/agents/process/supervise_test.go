package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/labstore"
)

func TestBackoffIsTheKubelets(t *testing.T) {
	b := DefaultBackoff
	var waits []time.Duration
	var cur time.Duration
	for range 8 {
		var wait time.Duration
		wait, cur = b.next(cur, time.Second)
		waits = append(waits, wait)
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("back-off waits %v, want %v", waits, want)
		}
	}
	// A container that ran 10 minutes starts the sequence again.
	if wait, after := b.next(cur, 10*time.Minute); wait != 0 || after != 10*time.Second {
		t.Errorf("after 10 min of running: wait %s then %s, want 0 then 10s", wait, after)
	}
	if got := (Backoff{Initial: time.Second}).WithDefaults(); got.Max != 5*time.Minute || got.Reset != 10*time.Minute {
		t.Errorf("WithDefaults = %+v", got)
	}
}

// lockedLog is the supervisor's own log, read by the test while the
// supervisor writes it.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// supervise runs Supervise on argv in the background with a short back-off
// and returns the store it reports to, the supervisor's log and a stop
// function.
func supervise(t *testing.T, argv ...string) (*labstore.Store, *lockedLog, func()) {
	t.Helper()
	dir := t.TempDir()
	store := labstore.OpenDir(dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logFile := filepath.Join(dir, "logs", "p.log")
	os.MkdirAll(filepath.Dir(logFile), 0o755)
	log := &lockedLog{}
	go func() {
		done <- Supervise(ctx, SuperviseSpec{Store: store, Namespace: "default", Name: "p", Node: "n1", Args: argv,
			LogFile: logFile, Backoff: Backoff{Initial: 300 * time.Millisecond, Max: time.Second, Reset: time.Minute},
			Log: log})
	}()
	stop := func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Supervise: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Supervise did not return after its context ended")
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			stop()
		}
	})
	return store, log, stop
}

// waitStatus polls the pod's status until ok accepts it (30 s at most: a
// bound for a loaded host, not a wait).
func waitStatus(t *testing.T, store *labstore.Store, what string, ok func(labstore.PodStatus) bool) labstore.PodStatus {
	t.Helper()
	var st labstore.PodStatus
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		var found bool
		st, found, _ = store.PodStatus("p")
		if found && ok(st) {
			return st
		}
	}
	t.Fatalf("status never showed %s; last %+v", what, st)
	return st
}

func TestSuperviseRestartsAKilledProcessAtOnce(t *testing.T) {
	store, _, stop := supervise(t, "sleep", "60")
	first := waitStatus(t, store, "running", func(s labstore.PodStatus) bool { return s.State == labstore.StateRunning && s.PID != 0 })
	if first.Restarts != 0 || first.Namespace != "default" || first.Node != "n1" || first.SupervisorPID != os.Getpid() {
		t.Errorf("first status %+v", first)
	}
	syscall.Kill(first.PID, syscall.SIGKILL)
	second := waitStatus(t, store, "a restart", func(s labstore.PodStatus) bool { return s.State == labstore.StateRunning && s.Restarts == 1 })
	if second.PID == first.PID || !Alive(second.PID) {
		t.Errorf("restarted process pid %d (was %d), alive %v", second.PID, first.PID, Alive(second.PID))
	}
	if lt := second.LastTermination; lt == nil || lt.Reason != labstore.ReasonError || lt.ExitCode != 137 || lt.Signal != "SIGKILL" {
		t.Errorf("last termination %+v, want Error, 137, SIGKILL", lt)
	}
	stop()
	if Alive(second.PID) {
		t.Errorf("the process %d outlived its supervisor's stop", second.PID)
	}
	// A stopping supervisor writes nothing more: a deleted pod's status is
	// not brought back. stop returned after Supervise did, and only
	// Supervise's own loop writes the status: one read is the whole check.
	store.ClearPodStatus("p")
	if _, found, _ := store.PodStatus("p"); found {
		t.Error("the status came back after the supervisor stopped")
	}
}

func TestSuperviseBacksOffACrashLoop(t *testing.T) {
	store, log, _ := supervise(t, "sh", "-c", "echo 'mode \"bogus\": unknown proxy mode' >&2; exit 3")
	// First exit: restarted at once; second: CrashLoopBackOff for 300ms.
	st := waitStatus(t, store, "CrashLoopBackOff", func(s labstore.PodStatus) bool { return s.Reason == labstore.ReasonCrashLoopBackOff })
	if st.State != labstore.StateWaiting || st.Restarts != 1 || st.PID != 0 || st.NextRestart.IsZero() {
		t.Errorf("status %+v, want Waiting after 1 restart", st)
	}
	lt := st.LastTermination
	if lt == nil || lt.Reason != labstore.ReasonError || lt.ExitCode != 3 || !strings.Contains(lt.Message, `mode "bogus": unknown proxy mode`) {
		t.Errorf("last termination %+v, want Error, code 3, the log's last line", lt)
	}
	// The back-off doubles: 300ms, 600ms, then the 1s cap (not 1.2s), as
	// the supervisor says it; the status's next restart is that long after
	// the exit (a lower bound: how late the test reads it does not matter).
	st = waitStatus(t, store, "restart 3", func(s labstore.PodStatus) bool { return s.Restarts >= 3 && s.State == labstore.StateWaiting })
	if wait := st.NextRestart.Sub(st.LastTermination.FinishedAt); wait < time.Second {
		t.Errorf("back-off before restart 4: next restart %s after the exit, want the 1s cap", wait)
	}
	for end := time.Now().Add(30 * time.Second); !strings.Contains(log.String(), "; back-off 1s restarting failed container"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the supervisor never said it backs off 1s (the cap):\n%s", log.String())
		}
	}
	if strings.Contains(log.String(), "back-off 1.2s") {
		t.Errorf("the back-off went past its 1s cap:\n%s", log.String())
	}
}

// TestStopGraceIsThePodsDeadline: a supervisor told to stop gives its
// container until the pod's deletion deadline when the pod is being
// deleted, else StopGrace.
func TestStopGraceIsThePodsDeadline(t *testing.T) {
	spec := SuperviseSpec{StopGrace: 1500 * time.Millisecond}
	if got := stopGrace(spec); got != 1500*time.Millisecond {
		t.Errorf("no deadline: %s", got)
	}
	spec.StopDeadline = func() (time.Time, bool) { return time.Time{}, false }
	if got := stopGrace(spec); got != 1500*time.Millisecond {
		t.Errorf("pod not being deleted: %s", got)
	}
	// The grace is the time left until the deadline, between the reads of
	// the clock around the call (no bound on how long the call took).
	before := time.Now()
	deadline := before.Add(20 * time.Second)
	spec.StopDeadline = func() (time.Time, bool) { return deadline, true }
	got := stopGrace(spec)
	if after := time.Now(); got > deadline.Sub(before) || got < deadline.Sub(after) {
		t.Errorf("deadline in 20 s: %s, want the time left (%s … %s)", got, deadline.Sub(after), deadline.Sub(before))
	}
	spec.StopDeadline = func() (time.Time, bool) { return time.Now().Add(-time.Second), true }
	if got := stopGrace(spec); got != 0 {
		t.Errorf("deadline passed: %s", got)
	}
}
