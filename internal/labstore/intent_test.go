package labstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIntentRoundTripAndClear(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("demo")
	if in, err := s.ReadIntent(); in != nil || err != nil {
		t.Fatalf("fresh store: intent %+v, %v", in, err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}, Status: corev1.PodStatus{PodIP: "10.244.1.2"}}
	want := &Intent{Op: OpApply, Phase: PhaseCommit, Pods: []*corev1.Pod{pod}, Objects: &State{Pods: []*corev1.Pod{pod}}, Stop: []string{"web-0"}}
	if err := s.WriteIntent(want); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadIntent()
	if err != nil {
		t.Fatal(err)
	}
	if got.Op != OpApply || got.Phase != PhaseCommit || got.PID != os.Getpid() || got.Started.IsZero() ||
		len(got.Pods) != 1 || got.Pods[0].Status.PodIP != "10.244.1.2" ||
		got.Objects.Pod("web-1") == nil || len(got.Stop) != 1 || got.Stop[0] != "web-0" {
		t.Errorf("intent read back as %+v", got)
	}
	if err := s.ClearIntent(); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearIntent(); err != nil {
		t.Errorf("clearing twice: %v", err)
	}
	if in, _ := s.ReadIntent(); in != nil {
		t.Errorf("cleared intent still read: %+v", in)
	}
}

// A delete removes the lock file while holding it: a command that waited
// for the lock must not then share it with one that opens the path anew.
func TestLockSurvivesRemovalOfItsFile(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("demo")
	unlock, err := s.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !s.Busy() {
		t.Error("held lock not reported busy")
	}
	got := make(chan func(), 1)
	go func() {
		u, err := s.Lock(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	// The waiter has opened the old file (two descriptors of this process
	// name it): only then does removing it test what it should.
	waitOpenedTwice(t, s.Dir+".lock")
	if err := s.RemoveLock(); err != nil {
		t.Fatal(err)
	}
	unlock()
	waiter := <-got
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if u, err := s.Lock(ctx); err == nil {
		u()
		t.Fatal("two holders of the lab's lock after its file was removed")
	}
	waiter()
	if s.Busy() {
		t.Error("released lock still reported busy")
	}
}

// waitOpenedTwice waits until two file descriptors of this process name
// path: the test's own lock and a waiter's.
func waitOpenedTwice(t *testing.T, path string) {
	t.Helper()
	path, err := filepath.EvalSymlinks(path) // as /proc shows it
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, fd := range fds {
			if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && target == path {
				n++
			}
		}
		if n >= 2 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("after 30 s %d descriptors of this process name %s, want 2 (the held lock and the waiter's)", n, path)
		}
	}
}
