package hostprog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

// policyHost is a Host whose jq is missing until apt-get install (run)
// succeeds, with svclab's policy-rc.d at policy.
func policyHost(policy string, run func(ctx context.Context, argv []string) error, log *bytes.Buffer) *Host {
	installed := false
	h := &Host{
		LookPath: func(name string) (string, error) {
			if installed {
				return "/usr/bin/" + name, nil
			}
			return "", errors.New("not found")
		},
		Run: func(ctx context.Context, _ []string, argv ...string) (string, error) {
			err := run(ctx, argv)
			installed = installed || err == nil && argv[1] == "install"
			return "", err
		},
		Install:   true,
		PolicyRCD: policy,
	}
	if log != nil {
		h.Log = log
	}
	return h
}

// While apt-get runs, svclab's policy-rc.d (its marker line, exit 101) is
// in place; it is gone after a success and after a failure alike.
func TestInstallPutsItsPolicyRCDOnlyWhileAptGetRuns(t *testing.T) {
	for _, fail := range []bool{false, true} {
		policy := filepath.Join(t.TempDir(), "policy-rc.d")
		var during []string
		h := policyHost(policy, func(_ context.Context, argv []string) error {
			data, err := os.ReadFile(policy)
			fi, serr := os.Stat(policy)
			if err != nil || serr != nil || fi.Mode().Perm() != 0o755 || string(data) != policyRCDScript {
				during = append(during, fmt.Sprintf("%s: policy-rc.d %q %v %v", argv[1], data, err, serr))
			}
			if out, err := exec.Command(policy).CombinedOutput(); exitCode(err) != 101 {
				during = append(during, fmt.Sprintf("%s: policy-rc.d ran: %v %s; want exit 101", argv[1], err, out))
			}
			if fail && argv[1] == "install" {
				return errors.New("E: Unable to locate package")
			}
			return nil
		}, nil)
		_, err := h.Ensure(context.Background(), JQ)
		if (err != nil) != fail {
			t.Errorf("fail=%v: Ensure: %v", fail, err)
		}
		for _, d := range during {
			t.Errorf("fail=%v: %s", fail, d)
		}
		if _, err := os.Lstat(policy); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("fail=%v: policy-rc.d left after the install: %v", fail, err)
		}
	}
}

func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// A policy-rc.d that is not svclab's (no marker) is used as it is and
// never removed nor rewritten; svclab's that a live install holds is not
// a leftover.
func TestInstallLeavesAForeignPolicyRCDAndSeesALiveOne(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "policy-rc.d")
	foreign := "#!/bin/sh\n# the administrator's\nexit 101\n"
	if err := os.WriteFile(policy, []byte(foreign), 0o755); err != nil {
		t.Fatal(err)
	}
	h := policyHost(policy, func(context.Context, []string) error { return nil }, nil)
	if _, err := h.Ensure(context.Background(), JQ); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(policy); err != nil || string(data) != foreign {
		t.Fatalf("the administrator's policy-rc.d: %q, %v; want it untouched", data, err)
	}
	if left, err := hostLeftovers(policy); err != nil || len(left) != 0 {
		t.Errorf("leftovers %v, %v: a foreign policy-rc.d is none of svclab's", left, err)
	}
	os.Remove(policy)

	release, err := createPolicyRCD(policy)
	if err != nil {
		t.Fatal(err)
	}
	if left, err := hostLeftovers(policy); err != nil || len(left) != 0 {
		t.Errorf("leftovers %v, %v while a live install holds the policy", left, err)
	}
	if err := removeLeftoverPolicyRCD(policy, nil); err != nil || !exists(policy) {
		t.Errorf("a live install's policy-rc.d removed (%v)", err)
	}
	release()
	if exists(policy) {
		t.Error("release left the policy-rc.d")
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// helperEnv makes this test binary an install that runs until a signal
// (TestHelperInstallUntilSignalled).
const helperEnv = "SVCLAB_HOSTPROG_TEST_INSTALL_POLICY"

// TestHelperInstallUntilSignalled is not a test: run by the tests below
// with helperEnv set, it installs jq with svclab's policy-rc.d at
// $helperEnv, says "apt-get running" and waits in apt-get until stopped.
func TestHelperInstallUntilSignalled(t *testing.T) {
	policy := os.Getenv(helperEnv)
	if policy == "" {
		t.Skip("a helper process of the policy-rc.d tests")
	}
	h := policyHost(policy, func(ctx context.Context, argv []string) error {
		fmt.Println("apt-get running")
		<-ctx.Done()
		return fmt.Errorf("%s: signal: terminated", strings.Join(argv, " "))
	}, nil)
	_, err := h.Ensure(context.Background(), JQ)
	fmt.Printf("Ensure: %v\n", err)
	os.Exit(3)
}

// installUntil starts an install in a child process (as root when the
// test is) and returns it once its apt-get runs.
func installUntil(t *testing.T, policy string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperInstallUntilSignalled$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+policy)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var rest bytes.Buffer
	cmd.Stderr = &rest
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if lines.Text() == "apt-get running" {
			go func() {
				for lines.Scan() {
					rest.WriteString(lines.Text() + "\n")
				}
			}()
			return cmd, &rest
		}
	}
	cmd.Wait()
	t.Fatalf("the install never ran apt-get: %s", rest.String())
	return nil, nil
}

// An install stopped by SIGINT (Ctrl-C), SIGTERM or SIGHUP (a closed
// terminal) used to die in apt-get with its policy-rc.d in place: no
// package's service restarted on any later upgrade. Now the signal stops
// apt-get and the policy is removed before the process exits.
func TestInstallStoppedBySignalRemovesItsPolicyRCD(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		policy := filepath.Join(t.TempDir(), "policy-rc.d")
		cmd, out := installUntil(t, policy)
		if data, err := os.ReadFile(policy); err != nil || !strings.Contains(string(data), PolicyRCDMarker) {
			t.Fatalf("%v: no policy-rc.d of svclab's while apt-get runs: %q, %v", sig, data, err)
		}
		cmd.Process.Signal(sig)
		cmd.Wait()
		if exists(policy) {
			t.Errorf("%v: the policy-rc.d is left after the install was stopped; helper said:\n%s", sig, out)
		}
	}
}

// An install killed with SIGKILL leaves its policy-rc.d (nothing can run
// then): `svclab get leftovers` lists it (HostLeftovers) and the next
// Ensure that may install removes it; a policy-rc.d without svclab's
// marker is never listed nor removed.
func TestKilledInstallsPolicyRCDIsListedAndRemovedByTheNextEnsure(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "policy-rc.d")
	cmd, _ := installUntil(t, policy)
	cmd.Process.Kill()
	cmd.Wait()
	left, err := hostLeftovers(policy)
	if err != nil || len(left) != 1 || left[0].Path != policy || !strings.Contains(left[0].What, "svclab's policy-rc.d") {
		t.Fatalf("leftovers %+v, %v; want the killed install's policy-rc.d", left, err)
	}
	var log bytes.Buffer
	h := policyHost(policy, func(context.Context, []string) error { return nil }, &log)
	h.LookPath = func(name string) (string, error) { return "/usr/bin/" + name, nil } // nothing to install
	if _, err := h.Ensure(context.Background(), JQ); err != nil {
		t.Fatal(err)
	}
	if exists(policy) || !strings.Contains(log.String(), "removed "+policy) {
		t.Errorf("the leftover policy-rc.d is still there (%v) or not reported: %q", exists(policy), log.String())
	}
	if left, _ := hostLeftovers(policy); len(left) != 0 {
		t.Errorf("leftovers after the removal: %+v", left)
	}
}

// A local user who can write where the policy-rc.d goes (a weakened
// /usr/sbin, or a PolicyRCD path in a shared directory) plants a dangling
// symbolic link there, or a policy-rc.d of their own: root's install used
// to write its script through the link (creating the file the user chose,
// as root); now it creates only with O_EXCL|O_NOFOLLOW, and neither lists,
// removes nor rewrites what is not svclab's.
func TestInstallNeverWritesThroughOrRemovesWhatNobodyPlanted(t *testing.T) {
	roottest.Require(t, "acts as the user nobody against an install as root")
	shared := roottest.SharedTmp(t)
	roottest.RunAsNobody(t, `cd "$1"
ln -s "$PWD/chosen-by-nobody" link
printf '#!/bin/sh\n%s\nexit 0\n' "$2" >theirs
chmod 755 theirs`, shared, PolicyRCDMarker)
	for _, name := range []string{"link", "theirs"} {
		policy := filepath.Join(shared, name)
		before, _ := os.Readlink(policy)
		h := policyHost(policy, func(context.Context, []string) error { return nil }, nil)
		if _, err := h.Ensure(context.Background(), JQ); err != nil {
			t.Errorf("%s: Ensure: %v", name, err)
		}
		if !exists(policy) {
			t.Errorf("%s: root removed nobody's file", name)
		}
		if after, _ := os.Readlink(policy); after != before {
			t.Errorf("%s: the link changed from %q to %q", name, before, after)
		}
		if left, err := hostLeftovers(policy); err != nil || len(left) != 0 {
			t.Errorf("%s: nobody's file listed as svclab's leftover: %+v, %v", name, left, err)
		}
	}
	if exists(filepath.Join(shared, "chosen-by-nobody")) {
		t.Error("root wrote its policy-rc.d through nobody's symbolic link")
	}
}
