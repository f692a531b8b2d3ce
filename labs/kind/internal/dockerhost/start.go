package dockerhost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/svclab/svclab/internal/cmdrun"
	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/kind/internal/host"
)

// daemonConfig is svclab's dockerd configuration (daemon.json).
func daemonConfig(q host.Quirks) map[string]any {
	c := map[string]any{
		"data-root": dataRoot(),
		"exec-root": execRoot,
		"pidfile":   pidFile,
		"hosts":     []string{Host},
		// dockerd chgrps its socket to this group, "docker" when unset —
		// and an empty "group" does not unset it (dockerd fills the file's
		// zero values from its flags' defaults) — so "root": the socket is
		// root:root 0660, in RunDir (0700), for root alone.
		"group":      "root",
		"log-driver": "json-file",
		"log-opts":   map[string]string{"max-size": "10m", "max-file": "2"},
		"features":   map[string]bool{"buildkit": false},
	}
	if q.NoCapSysResource {
		c["runtimes"] = map[string]any{"svclab-runc": map[string]string{"path": wrapperPath}}
		c["default-runtime"] = "svclab-runc"
		c["oom-score-adjust"] = 0
	}
	return c
}

// dockerdArgs runs dockerd inside the namespace with that configuration.
// nsenter switches only the network namespace: `ip netns exec` would also
// remount /sys, hiding the cgroup v1 hierarchies mounted below it.
func dockerdArgs() []string {
	return []string{"nsenter", "--net=/run/netns/" + Namespace, "dockerd", "--config-file", configPath}
}

// namespaceSetup creates the namespace with only a loopback.
var namespaceSetup = [][]string{
	{"ip", "netns", "add", Namespace},
	{"ip", "-n", Namespace, "link", "set", "lo", "up"},
}

func start(ctx context.Context, log io.Writer) error {
	q := host.Detect()
	if err := theHost.begin(); err != nil {
		return fmt.Errorf("saving the host's state: %w", err)
	}
	if _, err := os.Stat("/run/netns/" + Namespace); err != nil {
		for _, args := range namespaceSetup {
			if err := cmdrun.Command(args...).Run(ctx); err != nil {
				return err
			}
		}
	}
	for _, d := range []string{RunDir, execRoot} {
		if err := makeRunDir(d); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dataRoot(), 0o755); err != nil { // dockerd sets its own mode on it
		return err
	}
	cfg, _ := json.MarshalIndent(daemonConfig(q), "", "  ")
	if err := os.WriteFile(configPath, cfg, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(wrapperPath, []byte(host.RuncWrapper), 0o700); err != nil {
		return err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	// What the daemon changes on the host as it starts is svclab's to put
	// back (Ensure holds the lock Record would take).
	changes := theHost.track()
	defer changes.save(log)
	args := dockerdArgs()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for {
		if answers(ctx, Host) {
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("%s exited (%v); its log %s:\n%s", strings.Join(args, " "), err, logPath, process.LogTail(logPath, 30))
		case <-deadline:
			return fmt.Errorf("%s did not answer on %s within 60s; its log %s:\n%s", strings.Join(args, " "), Host, logPath, process.LogTail(logPath, 30))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// running reports whether the pid file names a live dockerd.
func running() bool {
	pid := daemonPID()
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

func daemonPID() int {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}
