package kubelet

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/agents/process"
)

// processPod is a pod whose container is a process of its own (a spec with
// Args): the kubelet supervises it as `svclab supervise` does, restarting
// it with back-off, and its status says so (the kubelet's pid as the
// supervisor's, the process's as the container's).
type processPod struct {
	cancel context.CancelFunc // stops the process (SIGTERM, then SIGKILL)
	done   chan struct{}      // closed once it is stopped
}

// startProcess starts a process pod's supervision. A pod with a status
// already ran under a kubelet that is gone: its process, which outlived
// that kubelet, is stopped first (two kube-proxies must never program one
// node), and the pod counts one restart more.
func (k *Kubelet) startProcess(spec Spec) (*processPod, error) {
	logPath, err := k.store.Confine(spec.Log)
	if err != nil {
		return nil, err
	}
	// The kubelet's lines about the pod (its restarts, their reasons) go
	// to the pod's log, as a supervisor of its own wrote them there.
	log, err := process.OpenLog(logPath)
	if err != nil {
		return nil, err
	}
	resume := k.takeOver(spec, log)
	ctx, cancel := context.WithCancel(context.Background())
	p := &processPod{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer log.Close()
		err := process.Supervise(ctx, process.SuperviseSpec{
			Store: k.store, Namespace: spec.Namespace, Name: spec.Name, Node: spec.Node,
			Args: spec.Args, LogFile: logPath, Backoff: spec.Backoff, Log: log, Resume: resume,
		})
		if err != nil {
			fmt.Fprintf(log, "svclab kubelet: %s: %v\n", spec.Name, err)
		}
	}()
	return p, nil
}

// takeOver returns the status of the pod's container under an earlier
// kubelet (nil when it has none), after stopping that container if it
// still runs. Only a process whose command line is the spec's is
// signalled: a pid of the status may since name another process.
func (k *Kubelet) takeOver(spec Spec, log io.Writer) *labstore.PodStatus {
	prev, ok, err := k.store.PodStatus(spec.Name)
	if err != nil || !ok {
		return nil
	}
	if prev.PID != 0 && prev.PID != k.pid && hasArgs(prev.PID, spec.Args) {
		fmt.Fprintf(log, "svclab kubelet: %s: stopping pid %d, which the node's previous kubelet (pid %d) ran\n", spec.Name, prev.PID, prev.SupervisorPID)
		process.StopPID(prev.PID, 1500*time.Millisecond)
	}
	if prev.State == labstore.StateRunning {
		prev.LastTermination = &labstore.Termination{ExitCode: 143, Signal: "SIGTERM", Reason: labstore.ReasonError, FinishedAt: time.Now(),
			Message: fmt.Sprintf("the node's kubelet (pid %d) that ran the container ended", prev.SupervisorPID)}
	}
	return &prev
}

// hasArgs reports whether pid runs with exactly args as its command line.
func hasArgs(pid int, args []string) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return slices.Equal(strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00"), args)
}

// terminate does nothing: a process pod is stopped by removing its spec.
func (p *processPod) terminate(time.Time) {}

// kill stops the process and waits until it has exited.
func (p *processPod) kill() {
	p.cancel()
	<-p.done
}
