package vm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
)

// testRunRoot points runRoot at dir for the test.
func testRunRoot(t *testing.T, dir string) {
	t.Helper()
	old := runRoot
	runRoot = func() string { return dir }
	t.Cleanup(func() { runRoot = old })
}

// age sets path's modification time to d ago.
func age(t *testing.T, path string, d time.Duration) {
	t.Helper()
	then := time.Now().Add(-d)
	if err := os.Chtimes(path, then, then); err != nil {
		t.Fatal(err)
	}
}

// The sweep removes the directories of dead runs (unlocked, over a
// minute old; without a lock, over an hour) and keeps live, fresh ones;
// it follows no symbolic link.
func TestSweepRemovesOnlyDeadRunsOfItsOwn(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runs")
	testRunRoot(t, root)
	dir, err := newRunDir()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != root || !strings.HasPrefix(filepath.Base(dir), runDirPrefix) {
		t.Fatalf("run directory %s, want %s/%s*", dir, root, runDirPrefix)
	}
	if fi, err := os.Lstat(root); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("runs' directory %s: %v, %v; want mode 0700", root, fi.Mode(), err)
	}
	mk := func(name string, lock bool, old time.Duration) string {
		d := filepath.Join(root, runDirPrefix+name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if lock {
			if err := os.WriteFile(filepath.Join(d, "lock"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		age(t, d, old)
		return d
	}
	dead := mk("dead", true, 2*time.Minute)
	live := mk("live", true, 2*time.Minute)
	l, err := lockFile(context.Background(), filepath.Join(live, "lock"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	fresh := mk("fresh", true, 0)
	starting := mk("starting", false, 10*time.Minute)
	diedStarting := mk("died-starting", false, 2*time.Hour)
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Mkdir(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	age(t, elsewhere, 2*time.Hour)
	if err := os.Symlink(elsewhere, filepath.Join(root, runDirPrefix+"link")); err != nil {
		t.Fatal(err)
	}

	sweepStale(root)
	for d, keep := range map[string]bool{dead: false, diedStarting: false, live: true, fresh: true, dir: true, starting: true, elsewhere: true} {
		if _, err := os.Lstat(d); (err == nil) != keep {
			t.Errorf("%s: kept=%v, want kept=%v", d, err == nil, keep)
		}
	}
}

// svclab vm run as root used to sweep $TMPDIR/svclab-vm-*/lock, opening
// each lock O_RDWR through symbolic links: a local user's link to a device
// (/dev/watchdog) or a FIFO of theirs made root open it. Now root's runs
// live in /run/svclab/vm (root's, 0700) and TMPDIR is not looked at: the
// planted FIFO is never opened and the user's directory is left alone.
func TestRootRunIgnoresTheLockNobodyPlantedInTMPDIR(t *testing.T) {
	roottest.Require(t, "acts as the user nobody against svclab vm run as root")
	shared := roottest.SharedTmp(t)
	t.Setenv("TMPDIR", shared)
	roottest.RunAsNobody(t, `cd `+shared+`
mkfifo fifo
mkdir `+runDirPrefix+`x
ln -s "$PWD/fifo" `+runDirPrefix+`x/lock
touch -d '2 hours ago' `+runDirPrefix+`x`)
	opens := roottest.WatchOpens(t, filepath.Join(shared, "fifo"))

	dir, err := newRunDir() // sweeps, as every run does first
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(dir)
	if n := opens(); n != 0 {
		t.Errorf("root opened nobody's FIFO through the planted lock link (%d opens)", n)
	}
	if _, err := os.Lstat(filepath.Join(shared, runDirPrefix+"x", "lock")); err != nil {
		t.Errorf("root removed nobody's planted directory: %v", err)
	}
	if strings.HasPrefix(dir, shared) {
		t.Errorf("root's run directory %s is under TMPDIR", dir)
	}
	var st syscall.Stat_t
	root := filepath.Dir(dir)
	if err := syscall.Lstat(root, &st); err != nil || st.Uid != 0 || st.Mode&0o777 != 0o700 {
		t.Errorf("runs' directory %s: uid %d mode %o (%v); want root's, 0700", root, st.Uid, st.Mode&0o777, err)
	}
}

// The runs' directory is where a user might plant it first (a runs'
// directory under a shared TMPDIR): a symbolic link to a directory of
// theirs, or a directory of their own, is refused, and nothing is made
// through the link.
func TestRunDirRefusesARunsDirectoryNobodyPlanted(t *testing.T) {
	roottest.Require(t, "acts as the user nobody against svclab vm run as root")
	shared := roottest.SharedTmp(t)
	roottest.RunAsNobody(t, `cd `+shared+`
mkdir target theirs
chmod 777 theirs
ln -s "$PWD/target" link`)
	for name, want := range map[string]string{"link": "a symbolic link", "theirs": "owned by uid"} {
		testRunRoot(t, filepath.Join(shared, name))
		if dir, err := newRunDir(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("runs' directory %s planted by nobody: made %q, %v; want an error saying %q", name, dir, err, want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(shared, "target")); len(entries) != 0 {
		t.Errorf("root made %v in nobody's directory through the link", entries)
	}
}
