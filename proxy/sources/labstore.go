package sources

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/svclab/svclab/internal/labstore"
)

// LabStore reads a lab's object store (see package internal/labstore). The lab
// bumps objects/GENERATION after every change; the source watches for that
// with inotify and, as a safety net, polls the generation every second.
type LabStore struct {
	Store *labstore.Store
}

// Run implements Source.
func (s *LabStore) Run(ctx context.Context, changed func()) error {
	dir := s.Store.Path("objects")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("lab store %s: watch: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return fmt.Errorf("lab store %s: watch: %w", dir, err)
	}
	last, _ := s.Store.Generation()
	go func() {
		defer w.Close()
		poll := time.NewTicker(time.Second)
		defer poll.Stop()
		check := func() {
			if gen, err := s.Store.Generation(); err == nil && gen != last {
				last = gen
				changed()
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.Events:
				check()
			case <-w.Errors:
				check()
			case <-poll.C:
				check()
			}
		}
	}()
	return nil
}

// List implements Source.
func (s *LabStore) List() (*Objects, error) {
	st, gen, err := s.Store.ReadObjects()
	if err != nil {
		return nil, err
	}
	return &Objects{Services: st.Services, EndpointSlices: st.EndpointSlices, Generation: gen}, nil
}
