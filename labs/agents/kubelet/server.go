package kubelet

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/nsthread"
	"github.com/svclab/svclab/labs/agents/netexec"
	"github.com/svclab/svclab/labs/agents/process"
)

// podServer is the server of one pod: its sockets in the pod's namespace,
// its log, and the status the kubelet keeps for it.
type podServer struct {
	k      *Kubelet
	spec   Spec
	srv    *netexec.Server
	log    *os.File
	cancel context.CancelFunc // ends Serve: a graceful shutdown
	done   chan struct{}      // closed when Serve has returned

	mu          sync.Mutex
	st          labstore.PodStatus
	terminating bool
	killed      bool
}

// startServer binds the pod's ports inside its namespace and serves them.
// A pod with a status already (its server ran before, under a kubelet
// that is gone) counts one restart more.
func (k *Kubelet) startServer(spec Spec) (*podServer, error) {
	logPath, err := k.store.Confine("logs", spec.Name+".log")
	if err != nil {
		return nil, err
	}
	log, err := process.OpenLog(logPath)
	if err != nil {
		return nil, err
	}
	p := &podServer{k: k, spec: spec, log: log, done: make(chan struct{})}
	opts := netexec.Options{
		PodName: spec.Name, NodeName: spec.Node, PodIPs: spec.PodIPs, Ports: spec.Ports, UDPPorts: spec.UDPPorts,
		Logger: slog.New(slog.NewTextHandler(log, nil)), DelayShutdown: spec.DelayShutdown,
	}
	if err := p.listen(opts); err != nil {
		p.line("start failed: %v", err)
		log.Close()
		return nil, err
	}
	p.st = k.startStatus(spec)
	if err := k.store.WritePodStatus(p.st); err != nil {
		p.srv.Kill()
		log.Close()
		return nil, err
	}
	if err := k.store.WriteFile(pidFile(spec.Name), []byte(strconv.Itoa(k.pid)+"\n")); err != nil {
		p.srv.Kill()
		log.Close()
		return nil, err
	}
	p.line("started the server of pod %s/%s (restarts %d)", spec.Namespace, spec.Name, p.st.Restarts)
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go p.serve(ctx)
	return p, nil
}

// listen binds the server's sockets on a thread switched into the pod's
// namespace: a socket belongs to the namespace it was made in.
func (p *podServer) listen(opts netexec.Options) error {
	target, err := netns.GetFromName(p.spec.NetNS)
	if err != nil {
		return fmt.Errorf("pod %s: network namespace %s: %w", p.spec.Name, p.spec.NetNS, err)
	}
	defer target.Close()
	return nsthread.Do(p.spec.NetNS, target, func() error {
		srv, err := netexec.Listen(opts)
		p.srv = srv
		return err
	})
}

// startStatus is the status of a server that starts now: a first start, or
// a restart of one that ran before (its status is there).
func (k *Kubelet) startStatus(spec Spec) labstore.PodStatus {
	now := time.Now()
	st := labstore.PodStatus{Namespace: spec.Namespace, Name: spec.Name, Node: spec.Node, CreatedAt: now}
	if prev, ok, err := k.store.PodStatus(spec.Name); err == nil && ok {
		st.CreatedAt, st.Restarts, st.LastTermination = prev.CreatedAt, prev.Restarts+1, prev.LastTermination
		if prev.State == labstore.StateRunning {
			st.LastTermination = &labstore.Termination{ExitCode: 137, Signal: "SIGKILL", Reason: labstore.ReasonError, FinishedAt: now,
				Message: fmt.Sprintf("the node's kubelet (pid %d) that ran the server ended", prev.SupervisorPID)}
		}
	}
	st.SupervisorPID, st.PID, st.State, st.StartedAt = k.pid, k.pid, labstore.StateRunning, now
	return st
}

// serve runs the server until it is stopped or fails, then records how it
// ended (a server that was killed records nothing: its pod is gone).
func (p *podServer) serve(ctx context.Context) {
	err := p.srv.Serve(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	defer close(p.done)
	if p.killed {
		return
	}
	t := &labstore.Termination{Reason: labstore.ReasonCompleted, FinishedAt: time.Now()}
	if err != nil {
		t.ExitCode, t.Reason, t.Message = 1, labstore.ReasonError, err.Error()
		p.line("server ended: %v", err)
	} else {
		p.line("server ended (terminating)")
	}
	p.st.State, p.st.Reason, p.st.PID, p.st.StartedAt, p.st.LastTermination = labstore.StateTerminated, t.Reason, 0, time.Time{}, t
	p.k.store.WritePodStatus(p.st)             //nolint:errcheck // the pid file's removal below is what the lab waits for
	p.k.store.RemoveFile(pidFile(p.spec.Name)) //nolint:errcheck // a stale one names a pid that is no server
	p.log.Close()
}

// terminate tells the server its pod terminates (the kubelet's SIGTERM): it
// serves on for its delay, then shuts down gracefully, and is closed
// outright at the deadline.
func (p *podServer) terminate(deadline time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminating || p.killed {
		return
	}
	p.terminating = true
	p.line("pod terminating (grace period until %s): the server stops after %s", deadline.Format(time.RFC3339), p.spec.DelayShutdown)
	// The delay ends in a graceful shutdown, unless the deadline comes first.
	stop := time.AfterFunc(p.spec.DelayShutdown, p.cancel)
	if p.spec.DelayShutdown >= time.Until(deadline) {
		stop.Stop()
	}
	kill := time.AfterFunc(time.Until(deadline), func() {
		p.line("grace period over: closing the server")
		p.cancel()
		p.srv.Kill()
	})
	go func() {
		<-p.done
		stop.Stop()
		kill.Stop()
	}()
}

// kill closes the server at once and waits for it: its pod is gone.
func (p *podServer) kill() {
	p.mu.Lock()
	if !p.killed {
		p.killed = true
		p.line("pod removed: closing the server")
		p.log.Close()
	}
	p.mu.Unlock()
	p.cancel()
	p.srv.Kill()
	<-p.done
	p.k.store.RemoveFile(pidFile(p.spec.Name)) //nolint:errcheck // a stale one names a pid that is no server
}

// line writes one of the kubelet's lines about the pod to the pod's log.
func (p *podServer) line(format string, args ...any) {
	fmt.Fprintf(p.log, "svclab kubelet: %s: %s\n", p.spec.Name, fmt.Sprintf(format, args...))
}

// pidFile is where the lab finds the process that serves a pod.
func pidFile(pod string) string { return "run/" + pod + ".pid" }
