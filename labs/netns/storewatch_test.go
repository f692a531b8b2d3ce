package netns

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/labstore"
)

// TestStoreWatchWakesOnAFileChange: with a back-off of an hour, wait can
// only return through the file the test writes (it would otherwise run
// into go test's timeout), and the directory it watches was created. The
// wait may wake on the write's first step (its temporary file), so the
// test waits for the write to finish before its directory is removed.
func TestStoreWatchWakesOnAFileChange(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "watched")
	l := &Lab{Store: labstore.OpenDir(dir)}
	sw := l.watchStore("proxies", "pods")
	defer sw.Close()
	if sw.w == nil {
		t.Fatal("watchStore fell back to the back-off alone: inotify should work here")
	}
	if fi, err := os.Stat(filepath.Join(dir, "pods")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("pods/ not created root's alone: %v %v", fi, err)
	}
	sw.next = time.Hour
	written := make(chan error, 1)
	go func() { written <- l.Store.WriteFile(filepath.Join("pods", "p.json"), []byte("{}\n")) }()
	sw.wait(context.Background())
	if err := <-written; err != nil {
		t.Error(err)
	}
	if got := sw.next; got != storeWatchMax {
		t.Errorf("back-off after a wait from an hour: %s, want the cap %s", got, storeWatchMax)
	}
}

// TestStoreWatchBacksOff: without inotify the back-off alone wakes the
// loop, growing from storeWatchFirst to storeWatchMax.
func TestStoreWatchBacksOff(t *testing.T) {
	sw := &storeWatch{next: storeWatchFirst}
	var seen []time.Duration
	for range 8 {
		seen = append(seen, sw.next)
		sw.wait(context.Background())
	}
	want := []time.Duration{10, 20, 40, 80, 160, 320, 500, 500}
	for i := range want {
		if seen[i] != want[i]*time.Millisecond {
			t.Fatalf("back-offs %v, want %v ms", seen, want)
		}
	}
}

// TestStoreWatchEndsWithItsContext: a cancelled wait returns at once.
func TestStoreWatchEndsWithItsContext(t *testing.T) {
	sw := &storeWatch{next: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sw.wait(ctx)
}
