package dockerhost

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/kind/internal/host"
)

// dialEnv makes this test binary the attacker's tool: run with it set to
// a socket path, it dials the socket and exits 0 when it connected, 13
// when the kernel said EACCES, 1 otherwise.
const dialEnv = "SVCLAB_TEST_DIAL_AS_ATTACKER"

func TestMain(m *testing.M) {
	if path := os.Getenv(dialEnv); path != "" {
		c, err := net.Dial("unix", path)
		switch {
		case err == nil:
			c.Close()
			fmt.Println("connected")
			os.Exit(0)
		case errors.Is(err, syscall.EACCES):
			fmt.Println(err)
			os.Exit(13)
		default:
			fmt.Println(err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// TestAttackerInTheSocketGroupCannotReachSvclabsDockerd plays finding 3 of
// the hardening issue: a local user in the group dockerd gives its socket
// ("docker" unless daemon.json says otherwise) dials svclab's dockerd,
// which is root for whoever reaches it. The run directory is made by the
// code that makes RunDir, and the socket is made as dockerd makes it
// (go-connections' NewUnixSocket: root:<group> 0660, the group from
// daemon.json); the attacker is nobody, with the socket's group as a
// supplementary group when that group is not root's (a stand-in for
// docker: nobody joins it for the test). It must get EACCES.
func TestAttackerInTheSocketGroupCannotReachSvclabsDockerd(t *testing.T) {
	roottest.Require(t, "acts as the user nobody against root's socket")
	run := filepath.Join(traversableDir(t), "svclab", "kind")
	if err := makeRunDir(run); err != nil {
		t.Fatal(err)
	}
	group, _ := daemonConfig(host.Quirks{})["group"].(string)
	if group == "" {
		group = "docker" // dockerd's default (moby daemon/listeners: defaultSocketGroup)
	}
	socketGID := 0
	var attackerGroups []uint32
	if group != "root" && group != "0" {
		// The attacker is a member of the socket's group: nobody's own
		// group stands in for docker here.
		_, gid := roottest.NobodyIDs(t)
		socketGID = gid
		attackerGroups = []uint32{uint32(gid)}
	} else if g, err := user.LookupGroup(group); err != nil || g.Gid != "0" {
		t.Fatalf("daemon.json's group %q is not gid 0 (%v)", group, err)
	}
	sock := filepath.Join(run, "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if err := os.Chown(sock, 0, socketGID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sock, 0o660); err != nil {
		t.Fatal(err)
	}
	// root reaches it: the socket works
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("root cannot dial the socket: %v", err)
	}
	c.Close()

	bin := attackerBinary(t)
	cmd := roottest.AsNobody(t, exec.Command(bin))
	cmd.SysProcAttr.Credential.Groups = attackerGroups
	cmd.Env = append(cmd.Env, dialEnv+"="+sock)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err == nil {
		t.Fatalf("nobody (groups %v) connected to svclab's dockerd socket %s (group %q): %s", attackerGroups, sock, group, out)
	}
	if !errors.As(err, &exit) || exit.ExitCode() != 13 {
		t.Fatalf("nobody's dial: %v, want EACCES: %s", err, out)
	}
	t.Logf("nobody (groups %v): %s", attackerGroups, strings.TrimSpace(string(out)))
}

// traversableDir is a root-owned 0755 directory, as /run is: the attacker
// may enter it, and what svclab makes below decides the rest.
func traversableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "svclab-dockerhost-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// attackerBinary is this test binary copied where nobody may run it (the
// go tool builds it in root's private directory).
func attackerBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	bin := filepath.Join(traversableDir(t), "attacker.test")
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}
