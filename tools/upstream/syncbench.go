package upstream

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SyncBenchOptions are what `svclab bench sync` measures.
type SyncBenchOptions struct {
	Mode      string // iptables, nftables or ipvs
	Services  int
	Endpoints int
	// Changes is how many of each change are timed (≥ 20 for a p95).
	Changes int
	// FullResyncs is how many hourly full resyncs are timed, one in each
	// of the first rounds (0: none). A full resync at 10,000 Services
	// takes each side a minute or more in the kernel, so it gets a few
	// samples, not Changes.
	FullResyncs int
	// IPTables picks the iptables binaries both sides run in iptables
	// mode: "" (the host's iptables, as upstream), "legacy" or "nft".
	IPTables string
	// Progress, when set, gets a line per step done.
	Progress io.Writer

	workerEnv []string
}

// Step names of the result, in the table's order.
const (
	StepCold     = "cold sync"
	StepEndpoint = "one endpoint changed"
	StepService  = "one Service added"
	StepNoop     = "nothing changed"
	// StepFull is the hourly full resync with nothing changed: svclab's
	// backends read the kernel and rewrite every rule (its loop's
	// ForceFullSync), upstream's iptables and nftables proxiers sync with
	// needFullSync set (forceSyncProxyRules), and upstream's IPVS proxier,
	// whose every sync is a full one, syncs.
	StepFull = "full resync (hourly)"
)

// SyncBenchResult is one run: both sides' times per step and memory.
type SyncBenchResult struct {
	Mode      string `json:"mode"`
	Services  int    `json:"services"`
	Endpoints int    `json:"endpoints"`
	Changes   int    `json:"changes"`
	// IPTables is the iptables binaries both sides ran ("" the host's).
	IPTables string `json:"iptables,omitempty"`
	// Upstream is the kube-proxy release the upstream side is built from.
	Upstream string `json:"upstream"`
	// VM is how the run was emulated when it ran in svclab's VM (IPVS on
	// a kernel without it): "qemu, accelerator tcg, Debian kernel …";
	// "" when it ran on this machine's kernel.
	VM    string       `json:"vm,omitempty"`
	Steps []StepResult `json:"steps"`
	// Memory is each side's process after the last step, by side.
	Memory map[string]*sideMemory `json:"memory"`
}

// StepResult is one step's numbers, by side (svclab, upstream).
type StepResult struct {
	Step  string                `json:"step"`
	Sides map[string]*SideStats `json:"sides"`
}

// SideStats summarize one side's samples of a step.
type SideStats struct {
	Samples int `json:"samples"`
	// VisibleP50MS and VisibleP95MS: event → change seen in the kernel.
	VisibleP50MS float64 `json:"visible_p50_ms"`
	VisibleP95MS float64 `json:"visible_p95_ms"`
	// SyncP50MS: event → the proxy's sync returned.
	SyncP50MS float64 `json:"sync_p50_ms"`
	// ExecsPerSync is the mean number of each program run per sync.
	ExecsPerSync map[string]float64 `json:"execs_per_sync"`

	visible, sync []time.Duration
	execs         map[string]int
}

// Default numbers of Services of the sync benchmark (--services).
const (
	DefaultSyncServices = 10000
	// DefaultIPVSSyncServices is ipvs mode's: it runs in svclab's VM,
	// emulated by TCG where the host has no KVM, and upstream's proxier
	// execs ipset once per set entry added and ipset and iptables some
	// fifty times per sync: 1000 Services × 10 endpoints, 20 changes of
	// each kind, took 18 minutes on 2 cores under TCG (6 of them
	// upstream's cold sync); 10000 would take hours.
	DefaultIPVSSyncServices = 1000
)

// DefaultSyncServicesFor is --services' default for mode.
func DefaultSyncServicesFor(mode string) int {
	if mode == ModeIPVS {
		return DefaultIPVSSyncServices
	}
	return DefaultSyncServices
}

// UpstreamRelease is the kube-proxy release this module builds (go.mod).
const UpstreamRelease = "v1.36.4"

// syncSides in the order they go first on even rounds.
var syncSides = []string{SideSvclab, SideUpstream}

// RunSyncBench starts one worker per side, each in a network namespace of
// its own, and takes them through the same steps, interleaved (the side
// that goes first alternates): the cold sync, then Changes rounds of one
// endpoint changed, one Service added and nothing changed, and in the
// first FullResyncs of them the hourly full resync. IPVS on a kernel
// without it runs in svclab's VM, this program again inside
// (runSyncBenchInVM).
func RunSyncBench(opts SyncBenchOptions) (*SyncBenchResult, error) {
	if err := checkSyncBenchOptions(opts); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("bench sync programs the kernel in network namespaces of its own: run it as root")
	}
	if needsVM(opts.Mode) {
		return runSyncBenchInVM(opts)
	}
	return runSyncBenchHere(opts)
}

// checkSyncBenchOptions names the first option that cannot be measured.
func checkSyncBenchOptions(opts SyncBenchOptions) error {
	switch opts.Mode {
	case ModeIPTables, ModeNFTables, ModeIPVS:
	default:
		return fmt.Errorf("--mode %q: iptables, nftables or ipvs", opts.Mode)
	}
	if opts.Services < 1 || opts.Endpoints < 1 || opts.Changes < 1 {
		return errors.New("--services, --endpoints and --changes must be at least 1")
	}
	if opts.FullResyncs < 0 || opts.FullResyncs > opts.Changes {
		return errors.New("--full-resyncs must be between 0 and --changes")
	}
	return nil
}

// runSyncBenchHere is RunSyncBench on this machine's kernel.
func runSyncBenchHere(opts SyncBenchOptions) (*SyncBenchResult, error) {
	path, err := iptablesPath(opts.IPTables)
	if err != nil {
		return nil, err
	}
	if path != "" {
		defer os.RemoveAll(path)
		opts.workerEnv = []string{"PATH=" + path + ":" + os.Getenv("PATH")}
	}
	workers := map[string]*syncWorkerProcess{}
	defer func() {
		for _, w := range workers {
			w.stop()
		}
	}()
	for _, side := range syncSides {
		w, err := startSyncWorker(side, opts)
		if err != nil {
			return nil, err
		}
		workers[side] = w
	}
	res := &SyncBenchResult{Mode: opts.Mode, Services: opts.Services, Endpoints: opts.Endpoints, Changes: opts.Changes,
		IPTables: opts.IPTables, Upstream: UpstreamRelease, Memory: map[string]*sideMemory{}}
	steps := map[string]*StepResult{}
	names := []string{StepCold, StepEndpoint, StepService, StepNoop}
	if opts.FullResyncs > 0 {
		names = append(names, StepFull)
	}
	for _, name := range names {
		steps[name] = &StepResult{Step: name, Sides: map[string]*SideStats{SideSvclab: {}, SideUpstream: {}}}
		res.Steps = append(res.Steps, *steps[name])
	}
	run := func(round int, step string, req syncRequest) error {
		order := syncSides
		if round%2 == 1 {
			order = []string{syncSides[1], syncSides[0]}
		}
		for _, side := range order {
			reply, err := workers[side].ask(req)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", side, step, err)
			}
			steps[step].Sides[side].add(reply)
		}
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "%s %d: svclab %s, upstream %s\n", step, round,
				last(steps[step].Sides[SideSvclab].visible), last(steps[step].Sides[SideUpstream].visible))
		}
		return nil
	}
	if err := run(0, StepCold, syncRequest{Op: opCold}); err != nil {
		return nil, err
	}
	for k := range opts.Changes {
		for _, s := range []struct {
			step, op string
		}{{StepEndpoint, opEndpoint}, {StepService, opService}, {StepNoop, opNoop}, {StepFull, opFull}} {
			if s.step == StepFull && k >= opts.FullResyncs {
				continue
			}
			if err := run(k, s.step, syncRequest{Op: s.op, K: k}); err != nil {
				return nil, err
			}
		}
	}
	for _, side := range syncSides {
		reply, err := workers[side].ask(syncRequest{Op: opMemory})
		if err != nil {
			return nil, fmt.Errorf("%s, memory: %w", side, err)
		}
		res.Memory[side] = reply.Memory
	}
	for i := range res.Steps {
		for _, st := range steps[res.Steps[i].Step].Sides {
			st.summarize()
		}
		res.Steps[i] = *steps[res.Steps[i].Step]
	}
	return res, nil
}

func last(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[len(d)-1].Round(10 * time.Microsecond)
}

func (s *SideStats) add(r syncReply) {
	s.visible = append(s.visible, time.Duration(r.VisibleNS))
	s.sync = append(s.sync, time.Duration(r.SyncNS))
	if s.execs == nil {
		s.execs = map[string]int{}
	}
	for prog, n := range r.Execs {
		s.execs[prog] += n
	}
}

// summarize computes the exported fields from the samples.
func (s *SideStats) summarize() {
	s.Samples = len(s.visible)
	s.VisibleP50MS = ms(percentile(s.visible, 50))
	s.VisibleP95MS = ms(percentile(s.visible, 95))
	s.SyncP50MS = ms(percentile(s.sync, 50))
	s.ExecsPerSync = map[string]float64{}
	for prog, n := range s.execs {
		s.ExecsPerSync[prog] = float64(n) / float64(s.Samples)
	}
}

// percentile is the nearest-rank p-th percentile of d.
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// syncWorkerProcess is a running worker and its pipes.
type syncWorkerProcess struct {
	side  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

// syncWorkerCommand is the worker's command line and extra environment:
// this program again, `svclab-bench-sync worker SIDE MODE N E` (the tests
// run their own binary instead).
var syncWorkerCommand = func(side, mode string, services, endpoints int) (argv, env []string) {
	return []string{"/proc/self/exe", "worker", side, mode, strconv.Itoa(services), strconv.Itoa(endpoints)}, nil
}

// startSyncWorker starts side's worker (syncWorkerCommand) in a new
// network namespace.
func startSyncWorker(side string, opts SyncBenchOptions) (*syncWorkerProcess, error) {
	argv, env := syncWorkerCommand(side, opts.Mode, opts.Services, opts.Endpoints)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(append(os.Environ(), netnsEnv+"=1"), env...), opts.workerEnv...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s worker: %w", side, err)
	}
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 1<<20)
	return &syncWorkerProcess{side: side, cmd: cmd, stdin: stdin, out: out}, nil
}

// ask sends one request and reads its reply.
func (w *syncWorkerProcess) ask(req syncRequest) (syncReply, error) {
	line, err := json.Marshal(req)
	if err != nil {
		return syncReply{}, err
	}
	if _, err := w.stdin.Write(append(line, '\n')); err != nil {
		return syncReply{}, fmt.Errorf("the %s worker is gone: %w", w.side, err)
	}
	if !w.out.Scan() {
		return syncReply{}, fmt.Errorf("the %s worker ended without a reply (%v)", w.side, w.out.Err())
	}
	var reply syncReply
	if err := json.Unmarshal(w.out.Bytes(), &reply); err != nil {
		return syncReply{}, fmt.Errorf("the %s worker's reply %q: %w", w.side, w.out.Text(), err)
	}
	if reply.Error != "" {
		return reply, errors.New(reply.Error)
	}
	return reply, nil
}

// stop ends the worker: its input closes, it returns.
func (w *syncWorkerProcess) stop() {
	w.stdin.Close()
	if err := w.cmd.Wait(); err != nil {
		fmt.Fprintf(os.Stderr, "the %s worker: %v\n", w.side, err)
	}
}

// iptablesPath is a directory to put first in the workers' PATH where
// iptables, iptables-save and iptables-restore are the backend's
// (iptables-legacy…, iptables-nft…), so that both proxies, and the
// kernel check, run them under the names they look up; "" for the host's.
func iptablesPath(backend string) (string, error) {
	switch backend {
	case "", "host":
		return "", nil
	case "legacy", "nft":
	default:
		return "", fmt.Errorf("--iptables %q: host, legacy or nft", backend)
	}
	dir, err := os.MkdirTemp("", "svclab-bench-sync-")
	if err != nil {
		return "", err
	}
	for _, tool := range []string{"iptables", "iptables-save", "iptables-restore"} {
		target, err := exec.LookPath(strings.Replace(tool, "iptables", "iptables-"+backend, 1))
		if err != nil {
			os.RemoveAll(dir)
			return "", err
		}
		if err := os.Symlink(target, filepath.Join(dir, tool)); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}
