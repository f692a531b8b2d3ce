package vm

import (
	"context"

	"github.com/svclab/svclab/internal/flock"
)

// fileLock is an flock(2) on a file: exclusive for the one who builds or
// deletes, shared for the runs that use a build.
type fileLock = flock.Lock

func lockFile(ctx context.Context, path string, exclusive bool) (*fileLock, error) {
	return flock.Acquire(ctx, path, exclusive)
}

func tryLockFile(path string) (*fileLock, bool) { return flock.TryAcquire(path) }
