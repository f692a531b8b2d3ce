package roottest

import (
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"testing"
)

// The attacker's tests act as nobody:nogroup, a local user without
// privileges and without supplementary groups, against svclab running as
// root in the test process.
const (
	NobodyUser  = "nobody"
	NobodyGroup = "nogroup"
)

// AsNobody is a command that runs argv as nobody:nogroup with no
// supplementary groups and a minimal environment.
// CLI: setpriv --reuid=nobody --regid=nogroup --clear-groups ARGV…
func AsNobody(t testing.TB, argv ...string) *exec.Cmd {
	t.Helper()
	Require(t, "switches to the user nobody")
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("setpriv (util-linux) is needed to act as nobody: %v", err)
	}
	cmd := exec.Command("setpriv", append([]string{"--reuid=" + NobodyUser, "--regid=" + NobodyGroup, "--clear-groups", "--"}, argv...)...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "LC_ALL=C"}
	return cmd
}

// RunAsNobody runs a sh script as nobody and fails the test, with the
// script's output, when it fails.
func RunAsNobody(t testing.TB, script string) {
	t.Helper()
	if out, err := AsNobody(t, "sh", "-ec", script).CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %s: %v\n%s", script, err, out)
	}
}

// NobodyIDs returns nobody's uid and nogroup's gid.
func NobodyIDs(t testing.TB) (uid, gid int) {
	t.Helper()
	u, err := user.Lookup(NobodyUser)
	if err != nil {
		t.Fatalf("user %s: %v", NobodyUser, err)
	}
	g, err := user.LookupGroup(NobodyGroup)
	if err != nil {
		t.Fatalf("group %s: %v", NobodyGroup, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(g.Gid)
	return uid, gid
}

// SharedTmp makes a directory like /tmp for one test (mode 1777: every
// user may add entries, only their owner may remove them), which nobody
// can reach, removed when the test ends.
func SharedTmp(t testing.TB) string {
	t.Helper()
	Require(t, "makes a directory shared with the user nobody")
	dir, err := os.MkdirTemp("", "svclab-shared-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	if out, err := AsNobody(t, "test", "-w", dir).CombinedOutput(); err != nil {
		t.Fatalf("nobody cannot write %s (is its parent %s traversable by others?): %v %s", dir, os.TempDir(), err, out)
	}
	return dir
}
