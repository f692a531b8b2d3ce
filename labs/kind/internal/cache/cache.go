package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/svclab/svclab/internal/flock"
	"github.com/svclab/svclab/internal/mounts"
)

// RootDefault is root's kind cache.
const RootDefault = "/var/cache/svclab/kind"

// Dir is the root of the kind backend's cache: $SVCLAB_KIND_CACHE, else
// $XDG_CACHE_HOME/svclab/kind, else /var/cache/svclab/kind for root and
// ~/.cache/svclab/kind for others. Under root a variable counts only when
// the folder it names is root's own (see rootOwned): svclab's dockerd
// keeps its data root there and the node images are built there, so
// whoever can change that folder is root (`sudo -E` keeps a user's
// XDG_CACHE_HOME). A variable ignored is said once, on stderr.
func Dir() string {
	dir, notice := choose(os.Geteuid(), os.Getenv, rootOwned)
	if notice != "" {
		say(notice)
	}
	return dir
}

// choose picks the cache directory (see Dir); notice says which variable
// it ignored and why ("" when none).
func choose(euid int, getenv func(string) string, trusted func(string) error) (dir, notice string) {
	candidates := []struct{ name, value, dir string }{
		{"SVCLAB_KIND_CACHE", getenv("SVCLAB_KIND_CACHE"), getenv("SVCLAB_KIND_CACHE")},
		{"XDG_CACHE_HOME", getenv("XDG_CACHE_HOME"), filepath.Join(getenv("XDG_CACHE_HOME"), "svclab", "kind")},
	}
	var ignored []string
	for _, c := range candidates {
		if c.value == "" {
			continue
		}
		if euid != 0 {
			return c.dir, ""
		}
		err := trusted(c.dir)
		if err == nil {
			return c.dir, noticeOf(ignored, c.dir)
		}
		ignored = append(ignored, fmt.Sprintf("%s=%s (%v)", c.name, c.value, err))
	}
	if euid == 0 {
		return RootDefault, noticeOf(ignored, RootDefault)
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".cache", "svclab", "kind"), ""
	}
	return filepath.Join(os.TempDir(), "svclab-kind-cache"), ""
}

func noticeOf(ignored []string, dir string) string {
	if len(ignored) == 0 {
		return ""
	}
	return fmt.Sprintf("svclab: running as root, ignoring %s: the kind cache must be a folder only root can change; using %s", strings.Join(ignored, " and "), dir)
}

// Key hashes parts into a short hex string for a cache key.
func Key(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:])[:12]
}

// Product returns root/name/key, building it first when it is missing:
// build gets an empty temporary directory to fill, which is renamed to the
// final path when build succeeds. hit reports that it was already there.
func Product(ctx context.Context, root, name, key string, build func(tmp string) error) (path string, hit bool, err error) {
	path = filepath.Join(root, name, key)
	if _, err := os.Stat(path); err == nil {
		return path, true, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", false, err
	}
	unlock, err := Lock(ctx, filepath.Join(root, name+".lock"))
	if err != nil {
		return "", false, err
	}
	defer unlock()
	if _, err := os.Stat(path); err == nil {
		return path, true, nil // built by someone else meanwhile
	}
	tmp := path + ".tmp"
	// Interrupted earlier builds of this product, of any key (the lock is
	// the name's, so none is under way); a killed build may have left a
	// mount in its directory (debootstrap's /proc): unmounted first, never
	// descended into.
	stale, _ := filepath.Glob(filepath.Join(root, name, "*.tmp"))
	for _, dir := range stale {
		if err := mounts.RemoveAll(dir); err != nil {
			return "", false, err
		}
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", false, err
	}
	if err := build(tmp); err != nil {
		mounts.RemoveAll(tmp) //nolint:errcheck // the next build removes it first
		return "", false, fmt.Errorf("build %s %s: %w", name, key, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.RemoveAll(tmp)
		return "", false, err
	}
	return path, false, nil
}

// Lock takes an exclusive flock on path (created if missing), waiting
// until it is free or ctx is done. The returned function releases it.
func Lock(ctx context.Context, path string) (func(), error) {
	l, err := flock.Acquire(ctx, path, true)
	if err != nil {
		return nil, err
	}
	return l.Unlock, nil
}
