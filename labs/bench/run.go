package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/labs"
	"github.com/svclab/svclab/labs/bench/report"
)

// Options say what to measure.
type Options struct {
	Services    []int  // numbers of Services, ascending
	Modes       []Mode // in the order to measure them
	Connections int    // fresh connections per target (default 200)
	// Timeout bounds the whole benchmark (default 10 minutes): when it
	// passes, the measurement under way stops, its lab is deleted, and the
	// result holds what was measured.
	Timeout time.Duration
	// Lab are the lab operations' options (Binary, RestartBackoff); Out
	// receives a progress line per measurement.
	Lab labs.Options
}

// DefaultConnections is how many fresh connections a target gets: with
// 200, the p99 is the second largest connect time.
const DefaultConnections = 200

// MaxConnections bounds --connections.
const MaxConnections = 100000

// Run measures every number of Services in every mode, the numbers in the
// outer loop: when the timeout stops it, every mode has its small sizes.
// It returns what it measured; an error only for options it cannot run
// with.
func Run(ctx context.Context, o Options) (*report.Result, error) {
	if len(o.Services) == 0 || len(o.Modes) == 0 {
		return nil, errors.New("bench dataplane: no Services or no modes to measure")
	}
	if o.Connections == 0 {
		o.Connections = DefaultConnections
	}
	if o.Connections < 1 || o.Connections > MaxConnections {
		return nil, fmt.Errorf("--connections %d: want 1 to %d", o.Connections, MaxConnections)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Lab.Out == nil {
		o.Lab.Out = io.Discard
	}
	start := time.Now()
	res := &report.Result{Machine: machine(), Config: report.Config{
		Services: o.Services, Connections: o.Connections, TimeoutMs: ms(o.Timeout)}}
	for _, m := range o.Modes {
		res.Config.Modes = append(res.Config.Modes, m.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	for _, n := range o.Services {
		for _, m := range o.Modes {
			var run report.Run
			if res.Stopped != "" {
				run = report.Run{Mode: m.Name, Services: n, Skipped: "not run: " + res.Stopped}
			} else {
				fmt.Fprintf(o.Lab.Out, "bench: %s, %d Services…\n", m.Name, n)
				run = measure(ctx, o, m, n)
				if ctx.Err() != nil {
					res.Stopped = stopReason(ctx, o.Timeout)
					if run.Error != "" {
						run.Error = res.Stopped + ": " + run.Error
					}
				}
			}
			res.Runs = append(res.Runs, run)
		}
	}
	res.ElapsedMs = ms(time.Since(start))
	return res, nil
}

func stopReason(ctx context.Context, timeout time.Duration) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("--timeout %s reached", timeout)
	}
	return "interrupted"
}

// measure is one mode at one number of Services, on a lab of its own:
// built, measured and deleted.
func measure(ctx context.Context, o Options, m Mode, n int) report.Run {
	run := report.Run{Mode: m.Name, Services: n}
	if why := unsupported(m); why != "" {
		run.Skipped = why
		return run
	}
	dir, err := os.MkdirTemp("", "svclab-bench-")
	if err != nil {
		run.Error = err.Error()
		return run
	}
	defer os.RemoveAll(dir)
	lab, err := createLab(ctx, dir, m, o.Lab)
	if err != nil {
		run.Error = err.Error()
		return run
	}
	defer labs.Delete(lab.Name()) //nolint:errcheck // best effort; `svclab get leftovers` shows a lab left behind
	if err := measureOn(ctx, lab, dir, o, m, n, &run); err != nil {
		if skip := notImplemented(m, err); skip != "" {
			run.Skipped = skip
		} else {
			run.Error = err.Error()
		}
	}
	return run
}

// measureOn runs the steps of one measurement on its lab.
func measureOn(ctx context.Context, lab *labs.Lab, dir string, o Options, m Mode, n int, run *report.Run) error {
	opts := labOptions(ctx, o.Lab)
	client, err := startPods(ctx, lab, dir, m, opts)
	if err != nil {
		return err
	}
	last := probe{lab: lab, mode: m, ip: serviceIP(n - 1), name: serviceName(n - 1)}
	prog, cpu, err := programServices(ctx, lab, n, last, labOptions(ctx, o.Lab))
	if err != nil {
		return err
	}
	run.Programming, run.CPU = prog, cpu
	objects, what, err := last.count(ctx)
	if err != nil {
		return err
	}
	prog.KernelObjects = objects
	lat, err := connectLatencies(ctx, lab, client, o.Connections, []target{
		{name: namespace + "/" + serviceName(0), addr: addrPort(0)},
		{name: namespace + "/" + serviceName(n-1), addr: addrPort(n - 1)},
	})
	if err != nil {
		return err
	}
	run.Early, run.Late = &lat[0], &lat[1]
	run.Notes = notes(m, n, *prog, what, *cpu)
	return nil
}

// labOptions are the lab operations' options with the time left as their
// bound on waiting for the proxies.
func labOptions(ctx context.Context, opts labs.Options) labs.Options {
	opts.Out = io.Discard
	if dl, ok := ctx.Deadline(); ok {
		opts.Timeout = max(time.Second, time.Until(dl))
	}
	return opts
}

// createLab builds the measurement's lab, under a name of its own.
func createLab(ctx context.Context, dir string, m Mode, opts labs.Options) (*labs.Lab, error) {
	name := fmt.Sprintf("dpbench-%04x", rand.IntN(1<<16))
	file := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(file, []byte(topologyYAML(name, m)), 0o644); err != nil {
		return nil, err
	}
	lab, _, err := labs.Create(ctx, file, labOptions(ctx, opts))
	return lab, err
}

// startPods applies the pod servers and the client pod and, for a mode the
// lab file cannot name (nftables), writes it into the kube-proxy ConfigMap
// and restarts the proxy, as a user switches modes. It returns the client
// pod's name.
func startPods(ctx context.Context, lab *labs.Lab, dir string, m Mode, opts labs.Options) (string, error) {
	manifest := podsYAML()
	if m.ProxyMode == "nftables" {
		cm, err := modeConfigMap(lab, m.ProxyMode)
		if err != nil {
			return "", err
		}
		manifest += "---\n" + cm
	}
	file := filepath.Join(dir, "pods.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		return "", err
	}
	if err := lab.Apply(ctx, file, opts); err != nil {
		return "", err
	}
	if m.ProxyMode == "nftables" {
		if err := lab.RestartProxies(ctx, []string{nodeName}, opts); err != nil {
			return "", err
		}
	}
	st, _, err := lab.Store.ReadObjects()
	if err != nil {
		return "", err
	}
	for _, p := range st.Pods {
		if p.Labels["app"] == clientApp {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("lab %s: no %s pod after the apply", lab.Name(), clientApp)
}

// modeConfigMap is the lab's kube-proxy ConfigMap with mode set.
func modeConfigMap(lab *labs.Lab, mode string) (string, error) {
	st, _, err := lab.Store.ReadObjects()
	if err != nil {
		return "", err
	}
	cm := st.ConfigMap("kube-system", "kube-proxy")
	if cm == nil {
		return "", fmt.Errorf("lab %s: no kube-system/kube-proxy ConfigMap", lab.Name())
	}
	return configMapWithMode(cm.Data["config.conf"], mode)
}

// programServices applies n Services and times it: to the objects in the
// store, and to the last Service's rule in the kernel; and the proxy's CPU
// time meanwhile, up to the end of the apply (which waits until the proxy
// reports the generation programmed).
func programServices(ctx context.Context, lab *labs.Lab, n int, last probe, opts labs.Options) (*report.Programming, *report.CPU, error) {
	m, err := decodeServices(n)
	if err != nil {
		return nil, nil, err
	}
	pid := lab.ProxyPID(nodeName)
	if pid == 0 {
		return nil, nil, fmt.Errorf("lab %s: the proxy on %s is not running", lab.Name(), nodeName)
	}
	cpu0, err := readCPU(pid)
	if err != nil {
		return nil, nil, err
	}
	gen0, err := lab.Store.Generation()
	if err != nil {
		return nil, nil, err
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watched := make(chan watchResult, 1)
	go func() { watched <- watchKernel(watchCtx, lab, gen0, last) }()
	start := time.Now()
	if err := lab.ApplyManifests(ctx, m, "generated Services", opts); err != nil {
		return nil, nil, err
	}
	cpu1, err := readCPU(pid)
	if err != nil {
		return nil, nil, fmt.Errorf("the proxy on %s (pid %d) during the apply: %w", nodeName, pid, err)
	}
	if lab.ProxyPID(nodeName) != pid {
		return nil, nil, fmt.Errorf("the proxy on %s restarted during the apply", nodeName)
	}
	var w watchResult
	select {
	case w = <-watched:
	case <-time.After(probeGrace):
		return nil, nil, fmt.Errorf("the proxy on %s reports the Services programmed, but %s has not shown the last one's rule %s later",
			nodeName, strings.Join(last.command(), " "), probeGrace)
	}
	if w.err != nil {
		return nil, nil, fmt.Errorf("probe %s: %w", strings.Join(last.command(), " "), w.err)
	}
	cpu := cpu1.since(cpu0)
	rule, timedBy, resolution := w.rule, "probe", w.resolution
	if synced, ok := proxySynced(lab, w.store); ok && synced.Before(rule) {
		rule, timedBy, resolution = synced, "proxy", 0
	}
	return &report.Programming{
		TotalMs: ms(rule.Sub(start)), StoreMs: ms(w.store.Sub(start)), ProxyMs: ms(rule.Sub(w.store)),
		ResolutionMs: ms(resolution), TimedBy: timedBy, RuleFound: true, Probe: strings.Join(last.command(), " "),
	}, &cpu, nil
}

// proxySynced is when the node's proxy last finished a sync, as it
// reported it (labstore.ProxyStatus.LastSync: after its kernel update
// returned), when that was a healthy sync after the objects were stored.
// The probe confirms the rule; this time is sharper than the probe's
// polling, which an exec in the lab's namespace makes coarse on a busy
// machine.
func proxySynced(lab *labs.Lab, stored time.Time) (time.Time, bool) {
	statuses, err := lab.Store.ProxyStatuses()
	if err != nil {
		return time.Time{}, false
	}
	st, ok := statuses[nodeName]
	if !ok || !st.Healthy || !st.LastSync.After(stored) {
		return time.Time{}, false
	}
	return st.LastSync, true
}

// probeGrace bounds how long after the apply (which waits for the proxy
// to report the generation programmed) the probe may take to see the rule.
const probeGrace = 30 * time.Second

type watchResult struct {
	store, rule time.Time
	resolution  time.Duration
	err         error
}

// watchKernel waits for the store's generation to pass gen0, then for the
// probe to find the rule.
func watchKernel(ctx context.Context, lab *labs.Lab, gen0 int64, p probe) watchResult {
	var w watchResult
	for {
		gen, err := lab.Store.Generation()
		if err != nil {
			return watchResult{err: err}
		}
		if gen > gen0 {
			w.store = time.Now()
			break
		}
		select {
		case <-ctx.Done():
			return watchResult{err: ctx.Err()}
		case <-time.After(5 * time.Millisecond):
		}
	}
	w.rule, w.resolution, w.err = p.waitFound(ctx)
	return w
}

// unsupported says why this host cannot measure a mode.
func unsupported(m Mode) string {
	if m.ProxyMode == "ipvs" && !hasIPVS() {
		return "ipvs: needs IPVS (this kernel lacks it; run under `svclab vm run`)"
	}
	if m.ProxyMode == "ipvs" {
		if err := hostprog.Check(hostprog.IPVSAdm); err != nil {
			return "ipvs: the probe needs ipvsadm: " + err.Error()
		}
	}
	return ""
}

// hasIPVS reports whether the kernel has IPVS loaded, built in or as a
// module the lab's proxy can load.
func hasIPVS() bool {
	if _, err := os.Stat("/proc/net/ip_vs"); err == nil {
		return true
	}
	if _, err := os.Stat("/sys/module/ip_vs"); err == nil {
		return true
	}
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return false
	}
	mods, _ := filepath.Glob(filepath.Join("/lib/modules", strings.TrimSpace(string(rel)), "kernel/net/netfilter/ipvs/ip_vs.ko*"))
	return len(mods) > 0
}

// notImplemented turns a proxy that refuses the mode into a skip.
func notImplemented(m Mode, err error) string {
	if strings.Contains(err.Error(), "not implemented by svclab") {
		return fmt.Sprintf("%s: svclab's proxy does not implement mode %q yet (its log: not implemented by svclab yet)", m.Name, m.ProxyMode)
	}
	return ""
}

func addrPort(i int) netip.AddrPort { return netip.AddrPortFrom(serviceIP(i), servicePort) }

func machine() report.Machine {
	m := report.Machine{CPUs: runtime.NumCPU()}
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(rel))
	}
	m.IPTables = iptablesVersion()
	return m
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// iptablesVersion is `iptables -V` of the host (its backend in
// parentheses), empty when it does not run.
func iptablesVersion() string {
	out, err := exec.Command(hostprog.IPTables, "-V").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
