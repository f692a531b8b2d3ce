package labsize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns"
)

// Options say what to measure and within which bounds.
type Options struct {
	// Nodes are the numbers of nodes to measure, ascending.
	Nodes []int
	// PodsPerNode is how many pods each node runs.
	PodsPerNode int
	// Timeout bounds the whole run (default 10 minutes): when it passes,
	// the lab under way is rolled back or deleted and the result holds
	// what was measured.
	Timeout time.Duration
	// MemoryFloor is the least memory (MemAvailable) the run leaves the
	// machine (default DefaultMemoryFloor).
	MemoryFloor int64
	// Lab are the lab operations' options (Binary); its Out is not used.
	Lab netns.Options
	// Progress receives a line per step (default: discarded).
	Progress io.Writer
}

// DefaultMemoryFloor is the available memory a run never goes below: 3 GiB
// for whatever else runs on the machine.
const DefaultMemoryFloor = 3 << 30

// Run measures every size in turn, each on a lab of its own that is
// deleted before the next is built. It returns what it measured; an error
// only for options it cannot run with.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.MemoryFloor <= 0 {
		o.MemoryFloor = DefaultMemoryFloor
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	start := time.Now()
	res := &Result{PodsPerNode: o.PodsPerNode}
	fsType, err := stateFilesystem(labstore.Root())
	if err != nil {
		return nil, err
	}
	res.StateFilesystem = fsType
	if fsType != "tmpfs" {
		fmt.Fprintf(o.Progress, "bench labs: the labs' state (%s) is on %s, not a tmpfs: pods start slower for minutes after a lab's delete there; compare runs on the same filesystem\n", labstore.Root(), fsType)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, o.Timeout, fmt.Errorf("--timeout %s reached", o.Timeout))
	defer cancel()
	var previous *Size
	for _, n := range o.Nodes {
		size := Size{Nodes: n, Pods: n * o.PodsPerNode}
		switch {
		case res.Stopped != "":
			size.Skipped = "not run: " + res.Stopped
		default:
			if why := o.refuse(size, previous); why != "" {
				size.Skipped = why
				res.Stopped = why
				break
			}
			fmt.Fprintf(o.Progress, "bench labs: %d nodes × %d pods…\n", n, o.PodsPerNode)
			if stopped := measure(ctx, o, &size); stopped != "" {
				res.Stopped = stopped
			} else if size.Error == "" {
				previous = &size
			}
		}
		res.Sizes = append(res.Sizes, size)
	}
	res.ElapsedMs = time.Since(start).Milliseconds()
	return res, nil
}

// check refuses sizes the lab's address plan cannot hold.
func (o Options) check() error {
	if len(o.Nodes) == 0 {
		return errors.New("bench labs: no sizes to measure")
	}
	for _, n := range o.Nodes {
		if n < 1 || n > MaxNodes {
			return fmt.Errorf("--nodes %d: want 1 to %d", n, MaxNodes)
		}
	}
	if o.PodsPerNode < 1 || o.PodsPerNode > MaxPodsPerNode {
		return fmt.Errorf("--pods-per-node %d: want 1 to %d", o.PodsPerNode, MaxPodsPerNode)
	}
	return nil
}

// refuse says why a size is not started: the memory available now, less
// what the size would take (the previous size's PSS per node and pod,
// scaled), would fall under the floor. "" to go ahead.
func (o Options) refuse(s Size, previous *Size) string {
	avail, err := memAvailable()
	if err != nil {
		return err.Error()
	}
	var need int64
	if previous != nil && previous.Pods+previous.Nodes > 0 {
		need = previous.Footprint.PSSBytes / int64(previous.Pods+previous.Nodes) * int64(s.Pods+s.Nodes)
	}
	if avail-need < o.MemoryFloor {
		return fmt.Sprintf("refused %d nodes × %d pods: %s available, about %s needed (from %d nodes), the floor is %s",
			s.Nodes, o.PodsPerNode, gib(avail), gib(need), previousNodes(previous), gib(o.MemoryFloor))
	}
	return ""
}

func previousNodes(s *Size) int {
	if s == nil {
		return 0
	}
	return s.Nodes
}

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// measure builds, measures and deletes one lab; what fails is in
// s.Error. A watchdog stops the build when memory runs short. It returns
// why the run must stop (its deadline, an interrupt, the memory floor), or
// "".
func measure(parent context.Context, o Options, s *Size) (stopped string) {
	ctx, stop := watchMemory(parent, o.MemoryFloor)
	defer stop()
	dir, err := os.MkdirTemp("", "svclab-bench-labs-")
	if err != nil {
		s.Error = err.Error()
		return ""
	}
	defer os.RemoveAll(dir)
	name := fmt.Sprintf("lsbench-%04x", rand.IntN(1<<16))
	err = measureLab(ctx, o, dir, name, s)
	start := time.Now()
	derr := netns.Delete(name)
	if err == nil && derr == nil {
		s.DeleteMs = time.Since(start).Milliseconds()
	}
	if ctx.Err() != nil {
		stopped = context.Cause(ctx).Error()
	}
	if err = errors.Join(err, derr); err != nil {
		if stopped != "" {
			err = fmt.Errorf("%s: %w", stopped, err)
		}
		s.Error = shorten(err.Error())
	}
	return stopped
}

// maxErrorLen bounds an error in the result: a rolled-back apply of a
// thousand pods names every one.
const maxErrorLen = 600

func shorten(s string) string {
	if len(s) <= maxErrorLen {
		return s
	}
	return s[:maxErrorLen] + fmt.Sprintf("… (%d more bytes)", len(s)-maxErrorLen)
}

// measureLab is the lab's create, its workload, its footprint and the
// Service's change, in that order.
func measureLab(ctx context.Context, o Options, dir, name string, s *Size) error {
	opts := labOptions(ctx, o.Lab)
	labFile, err := writeFile(dir, "lab.yaml", labYAML(name, s.Nodes))
	if err != nil {
		return err
	}
	lab, took, err := netns.Create(ctx, labFile, opts)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	s.CreateMs = took.Milliseconds()
	fmt.Fprintf(o.Progress, "bench labs: %d nodes created in %s; %d pods…\n", s.Nodes, took.Round(time.Millisecond), s.Pods)
	var steps netns.ChangeTimes
	podOpts := opts
	podOpts.Times = &steps
	if took, err = timedApply(ctx, lab, dir, "pods.yaml", workloadYAML(s.Pods), podOpts); err != nil {
		return fmt.Errorf("apply %d pods: %w", s.Pods, err)
	}
	s.PodsMs = took.Milliseconds()
	s.PodsStartMs, s.PodsProxiesMs = steps.Journal.Milliseconds(), steps.Proxies.Milliseconds()
	s.BringUpMs = s.CreateMs + s.PodsMs
	s.PerPodMs = float64(took.Microseconds()) / 1000 / float64(s.Pods)
	if s.Footprint, err = labFootprint(name); err != nil {
		return err
	}
	fmt.Fprintf(o.Progress, "bench labs: %d pods up in %s (started in %s, the proxies synced in %s): %d processes, PSS %s\n", s.Pods, took.Round(time.Millisecond),
		steps.Journal.Round(time.Millisecond), steps.Proxies.Round(time.Millisecond), s.Footprint.Processes, gib(s.Footprint.PSSBytes))
	if took, err = timedApply(ctx, lab, dir, "service.yaml", serviceYAML(changedServicePort), opts); err != nil {
		return fmt.Errorf("change the Service: %w", err)
	}
	s.ChangeServiceMs = took.Milliseconds()
	return nil
}

// timedApply writes manifest into dir/file and applies it to the lab.
func timedApply(ctx context.Context, lab *netns.Lab, dir, file, manifest string, opts netns.Options) (time.Duration, error) {
	path, err := writeFile(dir, file, manifest)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	err = lab.Apply(ctx, path, opts)
	return time.Since(start), err
}

func writeFile(dir, name, content string) (string, error) {
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, []byte(content), 0o644)
}

// labOptions are the lab operations' options with the time left as their
// bound on waiting for proxies and servers.
func labOptions(ctx context.Context, opts netns.Options) netns.Options {
	opts.Out = io.Discard
	if dl, ok := ctx.Deadline(); ok {
		opts.Timeout = max(time.Second, time.Until(dl))
	}
	return opts
}
