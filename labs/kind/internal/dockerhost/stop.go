package dockerhost

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/svclab/svclab/internal/cmdrun"
	"github.com/svclab/svclab/internal/mounts"
	"github.com/svclab/svclab/labs/kind/internal/cache"
)

// Release stops svclab's dockerd when no kind cluster is left on it and no
// other svclab process uses it (a build, a create). The user's Docker is
// left alone.
func Release(ctx context.Context, d *Daemon, log io.Writer) error {
	if d == nil || !d.Managed {
		return nil
	}
	d.Done()
	if log == nil {
		log = io.Discard
	}
	unlock, err := cache.Lock(ctx, lockPath)
	if err != nil {
		return err
	}
	defer unlock()
	if answers(ctx, Host) {
		clusters, err := KindClusters(ctx, d)
		if err != nil {
			return err
		}
		if len(clusters) > 0 {
			return nil
		}
	}
	if othersUse() {
		return nil
	}
	return stop(ctx, log)
}

// Stop stops svclab's dockerd whatever runs on it, deletes its namespace
// and restores the host's saved state. It is idempotent, and cleans up
// after a daemon or a CLI that crashed.
func Stop(ctx context.Context, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	if err := makeRunDir(RunDir); err != nil {
		return err
	}
	unlock, err := cache.Lock(ctx, lockPath)
	if err != nil {
		return err
	}
	defer unlock()
	return stop(ctx, log)
}

func stop(ctx context.Context, log io.Writer) error {
	var errs []string
	if answers(ctx, Host) {
		// Everything on svclab's daemon is svclab's: nodes of clusters
		// nobody deleted, build containers of an interrupted build.
		d := &Daemon{Host: Host, Managed: true}
		if ids, err := d.Command("ps", "-aq").Text(ctx); err == nil && ids != "" {
			if err := d.Command(append([]string{"rm", "-f", "-v"}, strings.Fields(ids)...)...).Run(ctx); err != nil {
				errs = append(errs, err.Error())
			} else {
				fmt.Fprintf(log, "removed %d containers from svclab's dockerd\n", len(strings.Fields(ids)))
			}
		}
		d.Command("network", "prune", "-f").Run(ctx)
	}
	if pid := daemonPID(); pid > 0 && syscall.Kill(pid, 0) == nil {
		syscall.Kill(pid, syscall.SIGTERM)
		if !waitGone(pid, 30*time.Second) {
			syscall.Kill(pid, syscall.SIGKILL)
			waitGone(pid, 5*time.Second)
		}
		fmt.Fprintln(log, "stopped svclab's dockerd")
	}
	// Shims of a daemon that died keep their containers running.
	for _, pid := range shimsOf(execRoot) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if n := mounts.UnmountBelow(dataRoot(), execRoot); n > 0 {
		fmt.Fprintf(log, "unmounted %d leftover mounts of svclab's dockerd\n", n)
	}
	if _, err := os.Stat("/run/netns/" + Namespace); err == nil {
		if err := cmdrun.Command("ip", "netns", "delete", Namespace).Run(ctx); err != nil {
			errs = append(errs, err.Error())
		} else {
			fmt.Fprintf(log, "deleted network namespace %s\n", Namespace)
		}
	}
	report, err := theHost.restore()
	for _, r := range report {
		fmt.Fprintln(log, r)
	}
	if err != nil {
		errs = append(errs, err.Error())
	}
	for _, f := range []string{pidFile, socketPath, configPath, wrapperPath} {
		os.Remove(f)
	}
	os.RemoveAll(execRoot)
	if len(errs) > 0 {
		return fmt.Errorf("stopping svclab's dockerd: %s", strings.Join(errs, "; "))
	}
	return nil
}

func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		// reap if it is our child
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		time.Sleep(100 * time.Millisecond)
	}
	return syscall.Kill(pid, 0) != nil
}

// shimsOf finds containerd shims and containerds whose command line
// mentions dir (svclab's exec root).
func shimsOf(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		c := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(c, dir) && (strings.Contains(c, "containerd-shim") || strings.HasPrefix(c, "containerd ")) {
			pids = append(pids, pid)
		}
	}
	return pids
}
