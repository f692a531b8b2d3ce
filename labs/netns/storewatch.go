package netns

import (
	"context"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
)

// The fallback wake-ups of a storeWatch grow from storeWatchFirst to
// storeWatchMax: they only find what no file in the store shows (a
// supervisor that was killed), so a slow one costs nothing else.
const (
	storeWatchFirst = 10 * time.Millisecond
	storeWatchMax   = 500 * time.Millisecond
)

// storeWatch wakes a loop that waits for a state the lab's processes write
// into its store (a proxy's status under proxies/, a pod's under pods/): at
// once when a file in those directories changes, else after a back-off.
//
// It replaced a fixed 10 ms poll, which read and decoded every status file
// a hundred times a second: in svclab's VM (one emulated CPU) one such
// look took longer than the tick, and the waiting command kept the CPU
// from the proxy it waited for (a restart into nftables mode took 81 s
// there, of which the waiting command used 85 s of CPU, user and system;
// with this wait it takes 47 s, and the waiting command 2 s of CPU).
type storeWatch struct {
	w    *fsnotify.Watcher // nil: inotify is unavailable, back-off only
	next time.Duration
}

// watchStore watches the lab store's directories dirs (created, root's
// alone, when missing). Without inotify (its limits reached) it still
// works, by the back-off alone. Close it when done.
func (l *Lab) watchStore(dirs ...string) *storeWatch {
	sw := &storeWatch{next: storeWatchFirst}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return sw
	}
	for _, d := range dirs {
		dir, err := l.Store.Confine(d)
		if err == nil {
			err = os.MkdirAll(dir, 0o700) // lab state is root's alone (labstore)
		}
		if err == nil {
			err = w.Add(dir)
		}
		if err != nil {
			w.Close()
			return sw
		}
	}
	sw.w = w
	return sw
}

// wait returns when a watched directory changed, when the back-off ran
// out, or when ctx ends (the caller checks ctx).
func (sw *storeWatch) wait(ctx context.Context) {
	timer := time.NewTimer(sw.next)
	defer timer.Stop()
	sw.next = min(2*sw.next, storeWatchMax)
	var events <-chan fsnotify.Event
	var errs <-chan error
	if sw.w != nil {
		events, errs = sw.w.Events, sw.w.Errors
	}
	select {
	case <-ctx.Done():
	case <-timer.C:
	case <-events:
		sw.drain()
	case <-errs: // an overflow: look again at once
	}
}

// drain takes the events already queued: one look at the store covers them.
func (sw *storeWatch) drain() {
	for {
		select {
		case <-sw.w.Events:
		default:
			return
		}
	}
}

func (sw *storeWatch) Close() {
	if sw.w != nil {
		sw.w.Close()
	}
}
