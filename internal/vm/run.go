package vm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Guest port names of the command's output streams.
const (
	stdoutPort = "svclab.stdout"
	stderrPort = "svclab.stderr"
)

// Run boots the VM, runs opts.Command in it as root, streams its stdout and
// stderr to opts.Stdout and opts.Stderr, powers the VM off and returns the
// command's exit code (128+N when a signal N ended it). The error is only for
// what kept the command from running or finishing: no qemu, no image, a
// guest that failed to boot, the timeout or ctx (qemu is then killed). The
// first run builds the cached image (see Prepare); later runs boot in a few
// seconds under TCG.
//
// CLI: svclab vm run [--share HOST:GUEST] -- CMD [ARGS…]
func Run(ctx context.Context, opts Options) (int, error) {
	opts = opts.withDefaults()
	if len(opts.Command) == 0 {
		return -1, errors.New("vm: no command")
	}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	shares, guests, err := resolveShares(opts.Shares)
	if err != nil {
		return -1, err
	}
	binary, err := findBinary(opts.Binary)
	if err != nil {
		return -1, err
	}
	if binary != "" {
		shares = append(shares, share9p{Tag: "svclab.bin", Path: filepath.Dir(binary), ReadOnly: true})
		guests = append(guests, guestBinDir)
	}
	dir := opts.Dir
	if dir == "" {
		dir = guestDir(shares, guests)
	}
	env := baseEnv(binary != "")
	for k, v := range opts.Env {
		env[k] = v
	}
	script, err := commandScript(opts.Command, env, dir)
	if err != nil {
		return -1, err
	}

	img, lock, err := useImage(ctx, PrepareOptions{CacheDir: opts.CacheDir, Log: opts.Log})
	if err != nil {
		return -1, err
	}
	defer lock.Unlock()
	accel, why := Accelerator(ctx, opts.CacheDir, img)
	logf("vm: kernel %s, accelerator %s (%s)", img.KernelVersion, accel, why)

	sweepStale()
	tmp, err := os.MkdirTemp("", runDirPrefix)
	if err != nil {
		return -1, err
	}
	defer os.RemoveAll(tmp)
	runLock, err := lockFile(ctx, filepath.Join(tmp, "lock"), true)
	if err != nil {
		return -1, err
	}
	defer runLock.Unlock()
	runDir := filepath.Join(tmp, "run") // shared with the guest
	initrd := filepath.Join(tmp, "initrd.cpio")
	if err := os.Mkdir(runDir, 0o755); err != nil {
		return -1, err
	}
	if err := writeInitramfs(ctx, img, initrd); err != nil {
		return -1, err
	}
	files := map[string]string{"cmd.sh": script, "shares": sharesFile(shares, guests)}
	if binary != "" {
		files["binary"] = guestBinDir + "/" + filepath.Base(binary) + "\n"
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(runDir, name), []byte(content), 0o644); err != nil {
			return -1, err
		}
	}

	console, stdout, stderr, err := newChannels()
	if err != nil {
		return -1, err
	}
	defer func() {
		for _, c := range []*channel{console, stdout, stderr} {
			c.close()
		}
	}()
	m := machine{
		Accel: accel, Memory: opts.Memory, CPUs: opts.CPUs,
		Kernel: img.Kernel, Initrd: initrd, Append: kernelArgs + " quiet",
		Root: img.Root, RunDir: runDir, Shares: shares,
		Console: 3, Ports: []port{{stdoutPort, 4}, {stderrPort, 5}},
	}
	if opts.Console != nil {
		m.Append = kernelArgs
	}
	args := m.args()
	cmd, err := qemuCommand(args, []*os.File{console.child, stdout.child, stderr.child})
	if err != nil {
		return -1, err
	}
	qemuErr := &tailBuffer{max: 16 << 10}
	cmd.Stderr = qemuErr
	con := &tailBuffer{max: 16 << 10, w: opts.Console}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return -1, fmt.Errorf("vm: start %s: %w", qemuBinary, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for _, c := range []*channel{console, stdout, stderr} {
		c.started()
	}
	console.copyTo(con)
	stdout.copyTo(opts.Stdout)
	stderr.copyTo(opts.Stderr)

	report := func(what string) error {
		return fmt.Errorf("vm: %s\nqemu: %s\nqemu stderr: %s\nconsole (last lines):\n%s",
			what, commandLine(qemuBinary, args), strings.TrimSpace(qemuErr.String()), lastLines(con.String(), 30))
	}
	// Once qemu is gone, the streams end when everything it wrote is read
	// (bounded, for a writer that does not keep up).
	drain := func() {
		timer := time.NewTimer(10 * time.Second)
		defer timer.Stop()
		for _, c := range []*channel{stdout, stderr, console} {
			select {
			case <-c.done:
			case <-timer.C:
				return
			}
		}
	}
	var waitErr error
	select {
	case waitErr = <-exited:
		drain()
	case <-ctx.Done():
		kill(cmd)
		<-exited
		drain()
		return -1, report(fmt.Sprintf("%s after %s: qemu killed", ctxReason(ctx, opts.Timeout), time.Since(start).Round(time.Millisecond)))
	}
	if data, err := os.ReadFile(filepath.Join(runDir, "exit")); err == nil {
		code, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			return -1, report(fmt.Sprintf("bad exit code %q from the guest", data))
		}
		return code, nil
	}
	if data, err := os.ReadFile(filepath.Join(runDir, "error")); err == nil {
		return -1, report("the guest failed to start the command: " + strings.TrimSpace(string(data)))
	}
	if waitErr != nil {
		return -1, report(fmt.Sprintf("qemu failed: %v", waitErr))
	}
	return -1, report("the VM powered off without running the command (kernel panic or init failure?)")
}

// runDirPrefix names the temporary directory of each run in os.TempDir().
const runDirPrefix = "svclab-vm-"

// sweepStale removes the temporary directories of runs that died without
// cleaning up (killed with SIGKILL; their qemu died with them): older than a
// minute and not locked by a live run; without a lock file (a run that died
// at its start), older than an hour.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), runDirPrefix+"*"))
	for _, d := range dirs {
		info, err := os.Stat(d)
		if err != nil || !info.IsDir() || time.Since(info.ModTime()) < time.Minute {
			continue
		}
		lock := filepath.Join(d, "lock")
		l, free := tryLockFile(lock)
		if !free && (exists(lock) || time.Since(info.ModTime()) < time.Hour) {
			continue // a live run
		}
		os.RemoveAll(d)
		l.Unlock()
	}
}

func newChannels() (console, stdout, stderr *channel, err error) {
	var cs []*channel
	for _, name := range []string{"console", "stdout", "stderr"} {
		c, err := newChannel(name)
		if err != nil {
			for _, c := range cs {
				c.close()
			}
			return nil, nil, nil, err
		}
		cs = append(cs, c)
	}
	return cs[0], cs[1], cs[2], nil
}

func ctxReason(ctx context.Context, timeout time.Duration) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("timed out (limit %s)", timeout)
	}
	return "cancelled"
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
