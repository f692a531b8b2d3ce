package roottest

import (
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
	"testing"
)

// The attacker's tests act as nobody:nogroup, a local user without
// privileges and without supplementary groups, against svclab running as
// root in the test process.
const (
	NobodyUser  = "nobody"
	NobodyGroup = "nogroup"
)

// AsNobody makes cmd run as nobody:nogroup with no supplementary groups
// and a minimal environment, and returns it: the child sets its groups,
// gid and uid before it executes, as
// `setpriv --reuid=nobody --regid=nogroup --clear-groups CMD…` does.
func AsNobody(t testing.TB, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	Require(t, "switches to the user nobody")
	uid, gid := NobodyIDs(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "LC_ALL=C"}
	return cmd
}

// RunAsNobody runs a sh script as nobody (args are its $1…) and fails the
// test, with the script's output, when it fails.
func RunAsNobody(t testing.TB, script string, args ...string) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-ec", script, "sh"}, args...)...)
	if out, err := AsNobody(t, cmd).CombinedOutput(); err != nil {
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
	RunAsNobody(t, `test -w "$1" || { echo "nobody cannot write $1: is its parent traversable by others?"; exit 1; }`, dir)
	return dir
}
