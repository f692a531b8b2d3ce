package workshop

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/svclab/svclab/internal/labstore"
)

// The workshop's state directory is svclab's only when svclab made it (or
// found it empty): it then holds the marker file StateMarker. svclab
// writes its state only into such a directory, and reset removes only the
// files svclab writes there, then the directory if nothing else is left —
// never a folder SVCLAB_WORKSHOP_DIR names by mistake or on purpose (sudo
// -E keeps a user's environment: `workshop reset` runs as root).

// StateMarker is the file that marks a workshop state directory as svclab's.
const StateMarker = ".svclab-workshop"

const markerText = "svclab's workshop state: svclab workshop reset removes only svclab's files here\n"

// legacyStateDir is the default directory, svclab's own under /run: one an
// older svclab made without the marker is still svclab's.
var legacyStateDir = filepath.Join(filepath.Dir(labstore.DefaultRoot), "workshop")

// ownFile matches the files svclab writes in the state directory (and the
// temporary files of its atomic writes); ownStepFile those in steps/.
var (
	ownFile     = regexp.MustCompile(`^(state\.json|lab\.yaml|\.tmp-[0-9]+)$`)
	ownStepFile = regexp.MustCompile(`^([0-9]+\.txt|\.tmp-[0-9]+)$`)
)

// notOursError is the error for a state directory svclab did not make.
func notOursError(dir, why string) error {
	return fmt.Errorf("workshop state directory %s (SVCLAB_WORKSHOP_DIR) %s: svclab did not make it, so it neither writes its state there nor deletes anything in it; name a folder that does not exist yet (svclab makes it)", dir, why)
}

// checkStateDir reports whether the state directory exists, and an error
// when it exists and is not svclab's (an empty one is nobody's: svclab may
// adopt it).
func checkStateDir() (exists bool, err error) {
	dir := StateDir()
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return true, notOursError(dir, "is not a directory ("+fi.Mode().Type().String()+")")
	}
	if m, err := os.Lstat(filepath.Join(dir, StateMarker)); err == nil && m.Mode().IsRegular() {
		return true, nil
	}
	if dir == legacyStateDir {
		return true, nil
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) == 0 {
		return true, nil
	}
	return true, notOursError(dir, "has no "+StateMarker)
}

// makeStateDir makes the state directory (0700) with its marker, or marks
// an empty one; it refuses one svclab did not make.
func makeStateDir() error {
	dir := StateDir()
	exists, err := checkStateDir()
	if err != nil {
		return err
	}
	if !exists {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return err
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, StateMarker), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(markerText); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeStateFile writes one file of the workshop's state (rel below the
// directory), making the directory first.
func writeStateFile(rel string, data []byte) error {
	if err := makeStateDir(); err != nil {
		return err
	}
	return store().WriteFile(rel, data)
}

// removeState deletes the workshop's state: the files svclab writes there,
// then the marker and the directory when nothing else is left. A directory
// svclab did not make is refused, and nothing in it is deleted.
func removeState() error {
	exists, err := checkStateDir()
	if err != nil || !exists {
		return err
	}
	dir := StateDir()
	others, err := removeOwnFiles(dir, ownFile, "steps")
	if err != nil {
		return err
	}
	if len(others) > 0 {
		return fmt.Errorf("workshop state directory %s: svclab's files are removed; the directory is kept, as it holds what svclab did not write: %s", dir, strings.Join(others, ", "))
	}
	if err := os.Remove(filepath.Join(dir, StateMarker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Remove(dir)
}

// removeOwnFiles removes the regular files of dir whose names own
// matches, and the subdirectory sub with svclab's files in it, and returns
// the names of what it left.
func removeOwnFiles(dir string, own *regexp.Regexp, sub string) (others []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case sub != "" && name == StateMarker: // the top directory's, removed last
		case e.Type().IsRegular() && own.MatchString(name):
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return others, err
			}
		case sub != "" && name == sub && e.IsDir():
			left, err := removeOwnFiles(filepath.Join(dir, sub), ownStepFile, "")
			if err != nil {
				return others, err
			}
			if len(left) > 0 {
				for _, l := range left {
					others = append(others, filepath.Join(sub, l))
				}
				continue
			}
			if err := os.Remove(filepath.Join(dir, sub)); err != nil {
				return others, err
			}
		default:
			others = append(others, name)
		}
	}
	return others, nil
}
