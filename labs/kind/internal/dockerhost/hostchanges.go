package dockerhost

import (
	"context"
	"fmt"
	"io"

	"github.com/svclab/svclab/labs/kind/internal/cache"
)

// HostChanges is a window in which svclab's containers may change the
// host's sysctls (a cluster's creation: kubelet and systemd in the
// privileged nodes write some): Record notes what changed in it, for Stop
// to put back. Changes outside every window are never svclab's.
type HostChanges struct {
	h      hostPaths
	boot   string
	before map[string]string // nil: nothing to record
}

// TrackHostChanges begins a window on d; nothing is tracked for the
// user's Docker, which svclab does not stop.
func (d *Daemon) TrackHostChanges() *HostChanges {
	if d == nil || !d.Managed {
		return &HostChanges{}
	}
	return theHost.track()
}

// track snapshots the sysctls as a window begins.
func (h hostPaths) track() *HostChanges {
	before, err := snapshotSysctls(h.procSys)
	if err != nil {
		return &HostChanges{}
	}
	return &HostChanges{h: h, boot: bootID(h.procSys), before: before}
}

// Record ends the window: the sysctls that changed since it began are
// saved (with svclab's daemon's lock held) for Stop to put back. A
// failure is reported to log; the window records at most once.
func (c *HostChanges) Record(log io.Writer) {
	if c == nil || c.before == nil {
		return
	}
	unlock, err := cache.Lock(context.Background(), lockPath)
	if err != nil {
		fmt.Fprintf(log, "svclab's dockerd: noting the host's changed sysctls: %v\n", err)
		return
	}
	defer unlock()
	c.save(log)
}

// save is Record for a caller holding the lock.
func (c *HostChanges) save(log io.Writer) {
	if c == nil || c.before == nil {
		return
	}
	if err := c.h.record(c.boot, c.before); err != nil {
		fmt.Fprintf(log, "svclab's dockerd: noting the host's changed sysctls: %v\n", err)
	}
	c.before = nil
}
