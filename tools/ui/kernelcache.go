package ui

import (
	"context"
	"sync"
	"time"
)

// kernelCache holds the last reading of the nodes' kernels — the expensive
// part of the state: a command as root in every node — and runs at most
// one reading at a time. Requests that miss while one runs wait for it and
// share its result, however many they are.
//
// A reading is labelled with the key of what it follows (the store's
// version and the page's traffic runs, read before it starts): it is
// served for that key only, and for at most maxAge (counters move with
// traffic the store does not record).
type kernelCache struct {
	maxAge time.Duration

	mu      sync.Mutex
	last    *reading // the last reading that finished, if any
	running *reading // the reading in progress, if any
}

// reading is one collection of every node's kernel.
type reading struct {
	key  string
	done chan struct{}
	// Set before done is closed.
	kernels  map[string]Kernel
	finished time.Time
	err      error
}

// get returns a reading for key: the last one if it is for key and not
// older than maxAge, else the one in progress if it is for key, else a new
// one, started once the one in progress (for another key) has finished.
// collect runs under base (the server's life), not under ctx: a request
// that leaves does not cancel the reading others wait for.
func (c *kernelCache) get(ctx, base context.Context, key string, collect func(context.Context) map[string]Kernel) (map[string]Kernel, error) {
	for {
		c.mu.Lock()
		if l := c.last; l != nil && l.key == key && time.Since(l.finished) < c.maxAge {
			c.mu.Unlock()
			return l.kernels, nil
		}
		r := c.running
		if r == nil {
			r = &reading{key: key, done: make(chan struct{})}
			c.running = r
			go c.collect(base, r, collect)
		}
		c.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if r.key == key {
			return r.kernels, r.err
		}
		// That reading followed another version of the lab: the next one
		// is for ours.
	}
}

// collect runs one reading and keeps it unless the server stopped under it.
func (c *kernelCache) collect(base context.Context, r *reading, collect func(context.Context) map[string]Kernel) {
	kernels := collect(base)
	c.mu.Lock()
	r.kernels, r.finished, r.err = kernels, time.Now(), base.Err()
	if r.err == nil {
		c.last = r
	}
	c.running = nil
	c.mu.Unlock()
	close(r.done)
}
