package process

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nsthread"
)

// Spec says what to run, where, and where its output and pid go.
type Spec struct {
	Namespace string   // named network namespace, as in /run/netns
	Args      []string // binary and arguments
	LogFile   string
	PIDFile   string
}

// Start runs spec.Args inside the namespace, detached from the caller (its own
// session, stdin from /dev/null), and returns the process's pid. The caller
// need not wait for it; a background reaper collects it if it ever exits
// while the caller still runs.
//
// The process is forked from a thread switched into the namespace (a child
// starts in its parent thread's network namespace), not run through `ip
// netns exec`, which gives each process a mount namespace of its own, a
// slave of the host's: every later `ip netns add` or delete of any lab —
// a bind mount under /run/netns — is then copied into or out of every such
// process's mount namespace, so each pod's namespace cost grew with the
// number of processes already running (3.4 ms per add and delete with
// none, 9.0 ms beside 1,000 `ip netns exec` processes, measured), and each
// held a copy of the whole mount table. Lab processes need only the network
// namespace: none resolves names or reads /sys/class/net (one-off commands
// in a pod, `svclab exec`, still run through `ip netns exec`, with the pod's
// resolv.conf).
func Start(spec Spec) (int, error) {
	if len(spec.Args) == 0 {
		return 0, fmt.Errorf("start in %s: no command", spec.Namespace)
	}
	target, err := netns.GetFromName(spec.Namespace)
	if err != nil {
		return 0, fmt.Errorf("start %s in %s: %w", spec.Args[0], spec.Namespace, err)
	}
	defer target.Close()
	log, err := OpenLog(spec.LogFile)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	cmd := exec.Command(spec.Args[0], spec.Args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := nsthread.Do(spec.Namespace, target, cmd.Start); err != nil {
		return 0, fmt.Errorf("start %s in %s: %w", spec.Args[0], spec.Namespace, err)
	}
	go cmd.Wait() //nolint:errcheck // reaps the child if it exits while we run
	pid := cmd.Process.Pid
	if spec.PIDFile != "" {
		if err := os.MkdirAll(filepath.Dir(spec.PIDFile), 0o700); err != nil {
			return pid, err
		}
		if err := os.WriteFile(spec.PIDFile, []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
			return pid, err
		}
	}
	return pid, nil
}

// Alive reports whether pid is a running (not zombie) process.
func Alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S …".
	for i := len(data) - 1; i > 0; i-- {
		if data[i] == ')' {
			return i+2 < len(data) && data[i+2] != 'Z' && data[i+2] != 'X'
		}
	}
	return false
}
