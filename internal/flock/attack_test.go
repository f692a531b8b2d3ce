package flock

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

// A local user plants things where root takes a lock, in a directory like
// /tmp: a symbolic link to a FIFO of theirs (standing for /dev/watchdog), a
// FIFO, a file of their own, a dangling link to where root would create a
// file. Root's lock refuses each one, and never opens the FIFO.
func TestLockRefusesWhatNobodyPlanted(t *testing.T) {
	roottest.Require(t, "acts as the user nobody against a lock taken as root")
	dir := roottest.SharedTmp(t)
	roottest.RunAsNobody(t, `cd `+dir+`
mkfifo fifo
ln -s "$PWD/fifo" link
mkfifo pipe
echo theirs >theirs
ln -s "$PWD/made-by-root" dangling`)
	fifo := filepath.Join(dir, "fifo")
	opens := roottest.WatchOpens(t, fifo)
	pipeOpens := roottest.WatchOpens(t, filepath.Join(dir, "pipe"))
	for _, name := range []string{"link", "pipe", "theirs", "dangling"} {
		path := filepath.Join(dir, name)
		if l, err := Acquire(context.Background(), path, true); err == nil {
			l.Unlock()
			t.Errorf("Acquire(%s) planted by nobody: took the lock, want a refusal", name)
		} else if !strings.Contains(err.Error(), path) {
			t.Errorf("Acquire(%s): error %q does not name the path", name, err)
		}
		if l, ok := TryAcquire(path); ok {
			l.Unlock()
			t.Errorf("TryAcquire(%s) planted by nobody: took the lock", name)
		}
	}
	if n := opens(); n != 0 {
		t.Errorf("root opened nobody's FIFO through the symbolic link %d times", n)
	}
	if n := pipeOpens(); n != 0 {
		t.Errorf("root opened nobody's FIFO in the lock's place %d times", n)
	}
	if _, err := os.Lstat(filepath.Join(dir, "made-by-root")); err == nil {
		t.Errorf("root created the target of nobody's dangling link")
	}
}
