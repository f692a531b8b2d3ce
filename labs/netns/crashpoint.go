package netns

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// CrashEnv names a step at which svclab kills itself with SIGKILL, exactly
// as a kill -9 from outside would interrupt it there: "update:commit" (the
// first time the step is reached) or "update:pod-started#2" (the second).
// It exists for the tests that prove every lab-changing command
// recoverable; unset, crash points do nothing. The steps are the
// crashPoint calls: create:intent, create:network, create:proxies,
// update:intent, pod:attached, update:pod-started, update:commit,
// update:objects, update:pod-stopped, restart:stopped, delete:intent,
// delete:processes, delete:namespaces.
const CrashEnv = "SVCLAB_TEST_CRASH_AT"

var crashCounts = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

func crashPoint(step string) {
	want := os.Getenv(CrashEnv)
	if want == "" {
		return
	}
	point, nth := want, 1
	if p, n, ok := strings.Cut(want, "#"); ok {
		point = p
		if v, err := strconv.Atoi(n); err == nil {
			nth = v
		}
	}
	if point != step {
		return
	}
	crashCounts.Lock()
	crashCounts.n[step]++
	hit := crashCounts.n[step] == nth
	crashCounts.Unlock()
	if hit {
		syscall.Kill(os.Getpid(), syscall.SIGKILL) //nolint:errcheck // it does not return
		select {}
	}
}

// HoldEnv names a step at which svclab waits until its command is
// interrupted (its context ends) before it goes on, so that a test can
// send SIGINT at that step and nowhere else: "update:pod-reported" holds
// every pod start of an apply after its "created on" line, before the
// change is committed. Unset, hold points do nothing.
const HoldEnv = "SVCLAB_TEST_HOLD_AT"

// holdPoint waits for ctx to end when HoldEnv names step.
func holdPoint(ctx context.Context, step string) {
	if os.Getenv(HoldEnv) == step {
		<-ctx.Done()
	}
}
