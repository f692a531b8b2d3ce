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
	// seen is the latest generation whose GENERATION event was handled:
	// every object file written before it is in dirty.
	seen int64
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
		if err := os.MkdirAll(dir, 0o700); err != nil { // lab state is root's alone (labstore)
			w.Close()
			return err
		}
		if err := w.Add(dir); err != nil {
			w.Close()
			return fmt.Errorf("lab store %s: watch: %w", dir, err)
		}
	}
	s.mu.Lock()
	s.seen, _ = s.Store.Generation()
	s.mu.Unlock()
	go s.watch(ctx, w, changed)
	return nil
}

// watch follows the store until ctx ends. The lab writes the object files
// first and GENERATION last, and inotify reports the events of all of a
// watcher's directories in one queue, in order, so when the event for GENERATION arrives every object file of that
// generation is already marked: only then is the generation taken as seen
// and the loop told. The poll is the safety net: a generation that moved
// without its event for two polls in a row means lost events.
func (s *LabStore) watch(ctx context.Context, w *fsnotify.Watcher, changed func()) {
	defer w.Close()
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	generationFile := filepath.Clean(s.Store.Path("objects", "GENERATION"))
	behind := false // the last poll saw a generation newer than seen
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-w.Events:
			if filepath.Clean(ev.Name) != generationFile {
				s.noteEvent(ev)
				continue
			}
			if gen, err := s.Store.Generation(); err == nil && s.advance(gen, false) {
				changed()
			}
		case err := <-w.Errors:
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				s.markLost()
				changed()
			}
		case <-poll.C:
			gen, err := s.Store.Generation()
			if err != nil {
				continue
			}
			s.mu.Lock()
			ahead := gen != s.seen
			s.mu.Unlock()
			if ahead && behind && s.advance(gen, true) {
				changed()
			}
			behind = ahead
		}
	}
}

// advance records gen as seen (and, when lost, that the changes are
// unknown); it reports whether gen is new.
func (s *LabStore) advance(gen int64, lost bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen == s.seen {
		return false
	}
	s.seen = gen
	s.lost = s.lost || lost
	return true
}

func (s *LabStore) markLost() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lost = true
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
	s.seen = max(s.seen, gen) // the objects listed are at least that new
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
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Changes{Generation: s.seen, Lost: s.lost}
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
