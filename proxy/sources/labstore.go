package sources

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/labstore"
)

// LabStore reads a lab's object store (see package internal/labstore). The lab
// writes each object to a file of its own (atomically) and then bumps
// objects/GENERATION; the source watches the Service and EndpointSlice
// directories and the generation with inotify, remembers which object files
// changed, and reads only those in Changes. As a safety net it polls the
// generation every second; an overflowing watch makes the next Changes say
// Lost (the loop then lists everything).
type LabStore struct {
	Store *labstore.Store

	mu sync.Mutex
	// dirty are the changed files of each watched directory since the
	// previous Changes.
	dirty map[string]map[string]struct{}
	// keys is the object each file held when last read, so that a removed
	// file (whose name may be a hash) names the object that went.
	keys map[string]map[string]Key
	lost bool
}

var _ Tracking = (*LabStore)(nil)

// watchedDirs are the directories whose files are objects the proxy reads.
var watchedDirs = []string{labstore.ServicesDir, labstore.EndpointSlicesDir}

// Run implements Source.
func (s *LabStore) Run(ctx context.Context, changed func()) error {
	s.mu.Lock()
	s.dirty = map[string]map[string]struct{}{}
	s.keys = map[string]map[string]Key{}
	for _, d := range watchedDirs {
		s.dirty[d], s.keys[d] = map[string]struct{}{}, map[string]Key{}
	}
	s.mu.Unlock()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("lab store %s: watch: %w", s.Store.Path("objects"), err)
	}
	for _, d := range append([]string{"objects"}, watchedDirs...) {
		dir := s.Store.Path(d)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			w.Close()
			return err
		}
		if err := w.Add(dir); err != nil {
			w.Close()
			return fmt.Errorf("lab store %s: watch: %w", dir, err)
		}
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
			case ev := <-w.Events:
				s.noteEvent(ev)
				check()
			case err := <-w.Errors:
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					s.mu.Lock()
					s.lost = true
					s.mu.Unlock()
				}
				check()
			case <-poll.C:
				check()
			}
		}
	}()
	return nil
}

// noteEvent marks an object file that was written, renamed or removed.
func (s *LabStore) noteEvent(ev fsnotify.Event) {
	dir, file := filepath.Split(ev.Name)
	if !labstore.IsObjectFile(file) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range watchedDirs {
		if filepath.Clean(dir) == filepath.Clean(s.Store.Path(d)) {
			s.dirty[d][file] = struct{}{}
		}
	}
}

// List implements Source.
func (s *LabStore) List() (*Objects, error) {
	st, gen, err := s.Store.ReadObjects()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys != nil {
		svcKeys, sliceKeys := map[string]Key{}, map[string]Key{}
		for _, o := range st.Services {
			svcKeys[labstore.ObjectFileName(o.Namespace, o.Name)] = Key{o.Namespace, o.Name}
		}
		for _, o := range st.EndpointSlices {
			sliceKeys[labstore.ObjectFileName(o.Namespace, o.Name)] = Key{o.Namespace, o.Name}
		}
		s.keys[labstore.ServicesDir], s.keys[labstore.EndpointSlicesDir] = svcKeys, sliceKeys
	}
	return &Objects{Services: st.Services, EndpointSlices: st.EndpointSlices, Generation: gen}, nil
}

// Changes implements Tracking: it reads the files that changed since the
// previous call (a removed file is a deleted object).
func (s *LabStore) Changes() (*Changes, error) {
	gen, err := s.Store.Generation()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Changes{Generation: gen, Lost: s.lost}
	s.lost = false
	if s.dirty == nil {
		return nil, errors.New("lab store: Changes before Run")
	}
	for file := range s.dirty[labstore.ServicesDir] {
		svc, err := s.Store.ReadServiceFile(file)
		var key *Key
		if svc != nil {
			key = &Key{svc.Namespace, svc.Name}
		}
		k, ok, err := s.resolve(labstore.ServicesDir, file, key, err)
		if err != nil {
			return nil, err
		}
		if ok {
			if c.Services == nil {
				c.Services = map[Key]*corev1.Service{}
			}
			c.Services[k] = svc
		}
	}
	for file := range s.dirty[labstore.EndpointSlicesDir] {
		sl, err := s.Store.ReadEndpointSliceFile(file)
		var key *Key
		if sl != nil {
			key = &Key{sl.Namespace, sl.Name}
		}
		k, ok, err := s.resolve(labstore.EndpointSlicesDir, file, key, err)
		if err != nil {
			return nil, err
		}
		if ok {
			if c.EndpointSlices == nil {
				c.EndpointSlices = map[Key]*discoveryv1.EndpointSlice{}
			}
			c.EndpointSlices[k] = sl
		}
	}
	for _, d := range watchedDirs {
		clear(s.dirty[d])
	}
	return c, nil
}

// resolve names the object a changed file holds: read (key set) it is that
// object, remembered for the file; gone (readErr is os.ErrNotExist) it is
// the object the file held when last read, forgotten (ok false when the
// file was never read: nothing to delete). Other read errors are returned.
func (s *LabStore) resolve(dir, file string, key *Key, readErr error) (Key, bool, error) {
	switch {
	case readErr == nil && key != nil:
		s.keys[dir][file] = *key
		return *key, true, nil
	case errors.Is(readErr, os.ErrNotExist):
		k, ok := s.keys[dir][file]
		delete(s.keys[dir], file)
		return k, ok, nil
	case readErr != nil:
		return Key{}, false, readErr
	}
	return Key{}, false, nil
}
