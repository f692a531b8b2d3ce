package labsize

import (
	"context"
	"fmt"
	"time"
)

// memoryPoll is how often the watchdog reads the available memory: a
// lab's pods start at a few hundred a second at most, each a few MiB.
const memoryPoll = 100 * time.Millisecond

// watchMemory returns a context that is cancelled, with the reason as its
// cause, when the machine's available memory falls under floor; stop ends
// the watch.
func watchMemory(parent context.Context, floor int64) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(memoryPoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if avail, err := memAvailable(); err == nil && avail < floor {
					cancel(fmt.Errorf("stopped: available memory %s under the floor %s", gib(avail), gib(floor)))
					return
				}
			}
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}
