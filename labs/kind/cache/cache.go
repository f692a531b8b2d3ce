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
)

// Dir is the root of the kind backend's cache: $SVCLAB_KIND_CACHE, else
// $XDG_CACHE_HOME/svclab/kind, else /var/cache/svclab/kind for root and
// ~/.cache/svclab/kind for others.
func Dir() string {
	if d := os.Getenv("SVCLAB_KIND_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "svclab", "kind")
	}
	if os.Geteuid() == 0 {
		return "/var/cache/svclab/kind"
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".cache", "svclab", "kind")
	}
	return filepath.Join(os.TempDir(), "svclab-kind-cache")
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
	if err := os.RemoveAll(tmp); err != nil { // an interrupted earlier build
		return "", false, err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", false, err
	}
	if err := build(tmp); err != nil {
		os.RemoveAll(tmp)
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
