package labstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/svclab/svclab/internal/flock"
)

// DefaultRoot is where labs keep their state; SVCLAB_STATE_DIR overrides it.
const DefaultRoot = "/run/svclab/labs"

// Root returns the directory that holds every lab's state.
func Root() string {
	if dir := os.Getenv("SVCLAB_STATE_DIR"); dir != "" {
		return dir
	}
	return DefaultRoot
}

// Store is one lab's state directory.
type Store struct {
	Lab string
	Dir string
	// root is the directory Dir must be a child of: the state root for a
	// store from Open, Dir's parent for one from OpenDir.
	root string
}

// Open returns the store of the named lab (it may not exist yet). Callers
// validate the name first (topology.ValidateLabName); whatever the name,
// the store writes and removes nothing outside its own directory directly
// under the state root (see Confine).
func Open(lab string) *Store {
	s := &Store{Lab: lab, Dir: filepath.Join(Root(), lab), root: Root()}
	if Root() == DefaultRoot {
		tightenDir(DefaultRoot)
	}
	if s.checkDir() == nil {
		tightenLabDir(s.Dir)
	}
	return s
}

// OpenDir returns the store at dir (used by a proxy given --lab-dir).
func OpenDir(dir string) *Store {
	dir = filepath.Clean(dir)
	tightenLabDir(dir)
	return &Store{Lab: filepath.Base(dir), Dir: dir, root: filepath.Dir(dir)}
}

// ErrOutside is the error of a path that would leave the lab's directory.
var ErrOutside = errors.New("outside the lab's state directory")

// checkDir makes sure the store's directory is one plain entry of its
// root: the lab's name is a single path element (not "", "." or "..", no
// "/"), so that the directory is neither the root itself nor anything
// above or beside it.
func (s *Store) checkDir() error {
	root := s.root
	if root == "" {
		root = filepath.Dir(filepath.Clean(s.Dir))
	}
	rel, err := filepath.Rel(root, s.Dir)
	if err != nil || s.Lab == "" || rel != s.Lab || rel == "." || rel == ".." || strings.ContainsAny(rel, `/\`) || s.Lab != filepath.Base(s.Dir) {
		return fmt.Errorf("lab store %q (directory %s): %w", s.Lab, s.Dir, ErrOutside)
	}
	return nil
}

// Confine resolves a path below the lab's directory (elements joined as
// Path does) and refuses, with ErrOutside, any that is not strictly inside
// it: "..", an absolute path that leads elsewhere, or the directory
// itself. Every file the store writes or removes goes through it.
func (s *Store) Confine(elem ...string) (string, error) {
	if err := s.checkDir(); err != nil {
		return "", err
	}
	p := s.Path(elem...)
	rel, err := filepath.Rel(s.Dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", fmt.Errorf("lab %s: %q: %w", s.Lab, filepath.Join(elem...), ErrOutside)
	}
	return p, nil
}

// RemoveFile removes one file below the lab's directory; a missing file
// is not an error.
func (s *Store) RemoveFile(elem ...string) error {
	p, err := s.Confine(elem...)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Exists reports whether the lab's state directory exists.
func (s *Store) Exists() bool {
	_, err := os.Stat(filepath.Join(s.Dir, "lab.yaml"))
	return err == nil
}

// Path joins elements below the store's directory.
func (s *Store) Path(elem ...string) string {
	return filepath.Join(append([]string{s.Dir}, elem...)...)
}

// List returns the names of the labs that have a state directory.
func List() ([]string, error) {
	entries, err := os.ReadDir(Root())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Remove deletes the lab's state directory (like rm -rf: no error if
// absent). It refuses a directory that is not one plain entry of the state
// root (a lab "named" ".." or "../../x").
func (s *Store) Remove() error {
	if err := s.checkDir(); err != nil {
		return err
	}
	return os.RemoveAll(s.Dir)
}

// Lock takes the lab's exclusive lock, so that two svclab commands never
// check or change one lab at once; it waits until the lock is free or ctx
// is done. The lock file sits next to the lab's directory (<lab>.lock), so
// it outlives the directory's removal and a create can hold it before the
// directory exists. The lock dies with the process.
func (s *Store) Lock(ctx context.Context) (unlock func(), err error) {
	path, err := s.lockPath()
	if err != nil {
		return nil, err
	}
	for {
		l, err := flock.Acquire(ctx, path, true)
		if err != nil {
			return nil, fmt.Errorf("lab %s: lock: %w", s.Lab, err)
		}
		// A delete removes the lock file while holding it; whoever waited
		// on the removed file locks the path afresh.
		if !l.Unlinked(path) {
			markTopDir(filepath.Dir(path))
			return l.Unlock, nil
		}
		l.Unlock()
	}
}

// Busy reports whether another process holds the lab's lock now.
func (s *Store) Busy() bool {
	path, err := s.lockPath()
	if err != nil {
		return false
	}
	l, ok := flock.TryAcquire(path)
	if !ok {
		_, err := os.Stat(path)
		return err == nil
	}
	l.Unlock()
	return false
}

// RemoveLock removes the lab's lock file; call it holding the lock, as the
// last step of deleting the lab (waiters then lock a new file).
func (s *Store) RemoveLock() error {
	path, err := s.lockPath()
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// lockPath is <lab>.lock beside the lab's directory, refused (ErrOutside)
// unless that directory is one entry of the state root.
func (s *Store) lockPath() (string, error) {
	if err := s.checkDir(); err != nil {
		return "", err
	}
	return s.Dir + ".lock", nil
}

// WriteFile writes data to a file below the store atomically, readable by
// root only (0600; the directories it makes 0700).
func (s *Store) WriteFile(rel string, data []byte) error {
	path, err := s.Confine(rel)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Generation returns the objects' generation (0 before the first write).
func (s *Store) Generation() (int64, error) {
	data, err := os.ReadFile(s.Path("objects", "GENERATION"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}

// The files of a lab's last trace: `svclab trace` writes them, the
// classroom page (`svclab ui`) shows them.
const (
	LastTraceJSON = "last-trace.json"
	LastTraceSVG  = "last-trace.svg"
)

// WriteLastTrace keeps a trace's JSON and SVG as the lab's last trace,
// each written atomically below the lab's directory (WriteFile, Confine).
func (s *Store) WriteLastTrace(jsonData, svg []byte) error {
	if err := s.WriteFile(LastTraceJSON, jsonData); err != nil {
		return fmt.Errorf("lab %s: last trace: %w", s.Lab, err)
	}
	if err := s.WriteFile(LastTraceSVG, svg); err != nil {
		return fmt.Errorf("lab %s: last trace: %w", s.Lab, err)
	}
	return nil
}
