package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/vm"
)

// syncBenchVMTimeout bounds a run in the VM, boot included: TCG runs the
// guest tens of times slower than the host, and 10000 Services take hours
// (DefaultIPVSSyncServices).
const syncBenchVMTimeout = 8 * time.Hour

// needsVM tells whether mode must run in svclab's VM: IPVS on a kernel
// without it (and not already inside the VM).
func needsVM(mode string) bool {
	return mode == ModeIPVS && os.Getenv("SVCLAB_VM") != "1" && !vm.KernelHasIPVS()
}

// syncBenchGuestCommand is the command the VM runs for opts: this program
// again with the same options and -o json (the tests run their own binary
// instead). Its stdout must start with the result's JSON.
var syncBenchGuestCommand = func(opts SyncBenchOptions) (argv []string, env map[string]string, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	return append([]string{exe}, syncBenchFlags(opts)...), nil, nil
}

// syncBenchFlags are svclab-bench-sync's flags for opts, -o json, and
// --quiet unless opts.Progress is set.
func syncBenchFlags(opts SyncBenchOptions) []string {
	flags := []string{"--mode", opts.Mode, "--services", strconv.Itoa(opts.Services),
		"--endpoints", strconv.Itoa(opts.Endpoints), "--changes", strconv.Itoa(opts.Changes),
		"--full-resyncs", strconv.Itoa(opts.FullResyncs),
		"--iptables", opts.IPTables, "-o", "json"}
	if opts.Progress == nil {
		flags = append(flags, "--quiet")
	}
	return flags
}

// vmAccelerator finds "vm: kernel 6.1.0-18-amd64, accelerator tcg (…)"
// in the VM's log.
var vmAccelerator = regexp.MustCompile(`vm: kernel (\S+), accelerator (\w+)`)

// runSyncBenchInVM boots svclab's VM (internal/vm: Debian's stock kernel,
// which has IPVS), runs syncBenchGuestCommand there with the directory of
// its program shared read-only at the same path, and returns the result
// the guest printed, with VM saying which kernel and accelerator ran it.
func runSyncBenchInVM(opts SyncBenchOptions) (*SyncBenchResult, error) {
	argv, env, err := syncBenchGuestCommand(opts)
	if err != nil {
		return nil, err
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	ctx := context.Background()
	if err := hostprog.Ensure(ctx, progress, hostprog.Needs(hostprog.VM)...); err != nil {
		return nil, fmt.Errorf("the VM's programs: %w", err)
	}
	dir := filepath.Dir(argv[0])
	var stdout, log bytes.Buffer
	code, err := vm.Run(ctx, vm.Options{
		Command: argv,
		Shares:  []vm.Share{{HostPath: dir, GuestPath: dir, ReadOnly: true}},
		Env:     env,
		Dir:     "/root",
		Binary:  "-",
		Timeout: syncBenchVMTimeout,
		Stdout:  &stdout,
		Stderr:  progress,
		Log:     io.MultiWriter(&log, progress),
	})
	if err != nil {
		return nil, fmt.Errorf("the VM: %w", err)
	}
	if code != 0 {
		return nil, fmt.Errorf("%s in the VM: exit %d", filepath.Base(argv[0]), code)
	}
	var res SyncBenchResult
	if err := json.NewDecoder(&stdout).Decode(&res); err != nil {
		return nil, fmt.Errorf("the VM's result: %w", err)
	}
	res.VM = vmDescription(log.String())
	return &res, nil
}

// vmDescription is "qemu, accelerator tcg, Debian kernel 6.1.0-18-amd64"
// from the VM's log ("qemu" alone when the log does not say).
func vmDescription(log string) string {
	m := vmAccelerator.FindStringSubmatch(log)
	if m == nil {
		return "qemu"
	}
	return fmt.Sprintf("qemu, accelerator %s, Debian kernel %s", m[2], m[1])
}
