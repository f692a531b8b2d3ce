package process

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
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
func Start(spec Spec) (int, error) {
	if len(spec.Args) == 0 {
		return 0, fmt.Errorf("start in %s: no command", spec.Namespace)
	}
	log, err := openLog(spec.LogFile)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	args := append([]string{"netns", "exec", spec.Namespace}, spec.Args...)
	cmd := exec.Command("ip", args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
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
