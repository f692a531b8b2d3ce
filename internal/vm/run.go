package vm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	r := &vmRun{ctx: ctx, opts: opts}
	defer r.cleanUp()
	for _, step := range []func() error{
		r.prepareCommand,
		r.lockImage,
		r.makeRunDir,
		r.bootUntilStarted,
		r.readExitCode,
	} {
		if err := step(); err != nil {
			return -1, err
		}
	}
	return r.code, nil
}

// vmRun is what the steps of Run share.
type vmRun struct {
	ctx      context.Context // with opts.Timeout
	opts     Options
	cleanups []func() // run in reverse order when Run returns

	shares  []share9p
	guests  []string // where each share is mounted in the guest
	binary  string   // the svclab binary shared with the guest; "" for none
	script  string   // cmd.sh, the guest runs it
	img     *Image
	accel   string
	runDir  string // shared with the guest
	initrd  string
	console *channel
	stdout  *channel
	stderr  *channel
	args    []string // qemu's
	cmd     *exec.Cmd
	qemuErr *tailBuffer // qemu's stderr
	con     *tailBuffer // the guest's console
	start   time.Time   // qemu started
	exited  chan error  // qemu's exit
	waitErr error       // qemu's exit status
	code    int         // the command's exit code
}

func (r *vmRun) logf(format string, args ...any) {
	if r.opts.Log != nil {
		fmt.Fprintf(r.opts.Log, format+"\n", args...)
	}
}

// onExit has fn run when Run returns, before what was registered earlier.
func (r *vmRun) onExit(fn func()) { r.cleanups = append(r.cleanups, fn) }

func (r *vmRun) cleanUp() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// prepareCommand resolves the shares (the svclab binary's directory among
// them), the working directory and the environment into the guest's script.
func (r *vmRun) prepareCommand() error {
	opts := r.opts
	shares, guests, err := resolveShares(opts.Shares)
	if err != nil {
		return err
	}
	binary, err := findBinary(opts.Binary)
	if err != nil {
		return err
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
	r.shares, r.guests, r.binary = shares, guests, binary
	r.script, err = commandScript(opts.Command, env, dir)
	return err
}

// lockImage finds (or builds) the cached image and keeps it locked for the
// run, and picks the accelerator.
func (r *vmRun) lockImage() error {
	img, lock, err := useImage(r.ctx, PrepareOptions{CacheDir: r.opts.CacheDir, Log: r.opts.Log})
	if err != nil {
		return err
	}
	r.onExit(func() { lock.Unlock() })
	r.img = img
	var why string
	r.accel, why = Accelerator(r.ctx, r.opts.CacheDir, img)
	r.logf("vm: kernel %s, accelerator %s (%s)", img.KernelVersion, r.accel, why)
	return nil
}

// makeRunDir makes this run's temporary directory (see newRunDir), locked
// while the run lives: the initramfs, and the directory shared with the guest with the
// script, the shares and the binary's path in it.
func (r *vmRun) makeRunDir() error {
	tmp, err := newRunDir()
	if err != nil {
		return err
	}
	r.onExit(func() { os.RemoveAll(tmp) })
	runLock, err := lockFile(r.ctx, filepath.Join(tmp, "lock"), true)
	if err != nil {
		return err
	}
	r.onExit(func() { runLock.Unlock() })
	r.runDir = filepath.Join(tmp, "run") // shared with the guest
	r.initrd = filepath.Join(tmp, "initrd.cpio")
	if err := os.Mkdir(r.runDir, 0o755); err != nil {
		return err
	}
	if err := writeInitramfs(r.ctx, r.img, r.initrd); err != nil {
		return err
	}
	files := map[string]string{"cmd.sh": r.script, "shares": sharesFile(r.shares, r.guests)}
	if r.binary != "" {
		files["binary"] = guestBinDir + "/" + filepath.Base(r.binary) + "\n"
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(r.runDir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// startQemu starts qemu with the console and the command's output streams
// as socket pairs, and copies them to their writers.
func (r *vmRun) startQemu() error {
	console, stdout, stderr, err := newChannels()
	if err != nil {
		return err
	}
	r.onExit(func() {
		for _, c := range []*channel{console, stdout, stderr} {
			c.close()
		}
	})
	r.console, r.stdout, r.stderr = console, stdout, stderr
	m := machine{
		Accel: r.accel, Memory: r.opts.Memory, CPUs: r.opts.CPUs,
		Kernel: r.img.Kernel, Initrd: r.initrd, Append: kernelArgs + " quiet",
		Root: r.img.Root, RunDir: r.runDir, Shares: r.shares,
		Console: 3, Ports: []port{{stdoutPort, 4}, {stderrPort, 5}},
	}
	if r.opts.Console != nil {
		m.Append = kernelArgs
	}
	r.args = m.args()
	r.cmd, err = qemuCommand(r.args, []*os.File{console.child, stdout.child, stderr.child})
	if err != nil {
		return err
	}
	r.qemuErr = &tailBuffer{max: 16 << 10}
	r.cmd.Stderr = r.qemuErr
	r.con = &tailBuffer{max: 16 << 10, w: r.opts.Console}
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("vm: start %s: %w", qemuBinary, err)
	}
	r.exited = make(chan error, 1)
	go func() { r.exited <- r.cmd.Wait() }()
	for _, c := range []*channel{console, stdout, stderr} {
		c.started()
	}
	console.copyTo(r.con)
	stdout.copyTo(r.opts.Stdout)
	stderr.copyTo(r.opts.Stderr)
	return nil
}

// qemuBoots bounds the boots of one Run: qemu 7.2 under TCG has been seen to
// die of SIGSEGV during the guest's PCI probe (about 1 run in 300 of
// svclab's suite); such a crash, before the guest started the command, is
// retried with a fresh qemu and logged.
const qemuBoots = 3

// bootUntilStarted starts qemu and waits for it; when qemu died of a signal
// before the guest started the command, it boots again (up to qemuBoots).
func (r *vmRun) bootUntilStarted() error {
	for boot := 1; ; boot++ {
		if err := r.startQemu(); err != nil {
			return err
		}
		if err := r.waitForQemu(); err != nil {
			return err
		}
		sig, crashed := signalled(r.waitErr)
		if !crashed || exists(filepath.Join(r.runDir, "started")) || boot == qemuBoots {
			return nil
		}
		r.logf("vm: qemu died of %v before the guest started the command (boot %d of %d), booting again; console's last lines:\n%s",
			sig, boot, qemuBoots, lastLines(r.con.String(), 5))
	}
}

// signalled reports whether qemu's exit status is a death by a signal.
func signalled(waitErr error) (syscall.Signal, bool) {
	var exit *exec.ExitError
	if !errors.As(waitErr, &exit) {
		return 0, false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return ws.Signal(), true
}

// waitForQemu waits until qemu exits, or kills it when ctx ends.
func (r *vmRun) waitForQemu() error {
	select {
	case r.waitErr = <-r.exited:
		r.drain()
		return nil
	case <-r.ctx.Done():
		kill(r.cmd)
		<-r.exited
		r.drain()
		return r.report(fmt.Sprintf("%s after %s: qemu killed", ctxReason(r.ctx, r.opts.Timeout), time.Since(r.start).Round(time.Millisecond)))
	}
}

// readExitCode reads the exit code the guest wrote, or the reason it
// wrote none.
func (r *vmRun) readExitCode() error {
	if data, err := os.ReadFile(filepath.Join(r.runDir, "exit")); err == nil {
		code, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			return r.report(fmt.Sprintf("bad exit code %q from the guest", data))
		}
		r.code = code
		return nil
	}
	if data, err := os.ReadFile(filepath.Join(r.runDir, "error")); err == nil {
		return r.report("the guest failed to start the command: " + strings.TrimSpace(string(data)))
	}
	if r.waitErr != nil {
		return r.report(fmt.Sprintf("qemu failed: %v", r.waitErr))
	}
	return r.report("the VM powered off without running the command (kernel panic or init failure?)")
}

// drain waits, once qemu is gone, until the streams end when everything it
// wrote is read (bounded, for a writer that does not keep up).
func (r *vmRun) drain() {
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for _, c := range []*channel{r.stdout, r.stderr, r.console} {
		select {
		case <-c.done:
		case <-timer.C:
			return
		}
	}
}

// report is the error for what went wrong, with qemu's command line, its
// stderr and the console's last lines.
func (r *vmRun) report(what string) error {
	return fmt.Errorf("vm: %s\nqemu: %s\nqemu stderr: %s\nconsole (last lines):\n%s",
		what, commandLine(qemuBinary, r.args), strings.TrimSpace(r.qemuErr.String()), lastLines(r.con.String(), 30))
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
