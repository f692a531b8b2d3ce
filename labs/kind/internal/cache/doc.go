// Package cache keeps the kind backend's build products (binaries, root
// filesystems, Docker's data) under one directory, keyed by versions: a
// product is built into a temporary directory next to its final place,
// under an exclusive flock, and renamed into place, so concurrent runs build
// it once and an interrupted build leaves only a temporary directory that
// the next build removes. Under root the directory is one only root can
// change: a $SVCLAB_KIND_CACHE or $XDG_CACHE_HOME (kept by `sudo -E`) that
// names a user's folder is ignored, with one line on stderr saying so.
package cache
