package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/svclab/svclab/internal/labstore"
)

// Backoff is the kubelet's container restart back-off: the first restart
// is immediate, each later one waits Initial, doubling up to Max; a
// container that ran for Reset or longer starts the sequence again.
type Backoff struct {
	Initial, Max, Reset time.Duration
}

// DefaultBackoff is upstream kubelet's: 10 s doubling to 5 min, reset after
// 10 min of running.
var DefaultBackoff = Backoff{Initial: 10 * time.Second, Max: 5 * time.Minute, Reset: 10 * time.Minute}

// WithDefaults fills the zero fields from DefaultBackoff.
func (b Backoff) WithDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = DefaultBackoff.Initial
	}
	if b.Max <= 0 {
		b.Max = DefaultBackoff.Max
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	if b.Reset <= 0 {
		b.Reset = DefaultBackoff.Reset
	}
	return b
}

// next returns the wait before the restart that follows an exit, and the
// back-off to use after that restart (prev is the current back-off, 0 after
// a reset).
func (b Backoff) next(prev, ran time.Duration) (wait, after time.Duration) {
	if ran >= b.Reset {
		prev = 0
	}
	if prev == 0 {
		return 0, b.Initial
	}
	return prev, min(2*prev, b.Max)
}

// SuperviseSpec says which process a supervisor runs and where it reports.
type SuperviseSpec struct {
	// Store is the lab's store; the status goes to its pods/<Name>.json.
	Store *labstore.Store
	// Namespace, Name and Node name the pod ("kube-system",
	// "kube-proxy-node1", "node1").
	Namespace, Name, Node string
	// Args is the container's program and arguments.
	Args []string
	// LogFile is where the container's output goes (appended; without one
	// it shares the supervisor's stdout and stderr); its last lines become a
	// failed container's termination message.
	LogFile string
	Backoff Backoff
	// Log receives the supervisor's own lines (default: stderr).
	Log io.Writer
	// StopGrace is how long a container has to exit after SIGTERM when the
	// supervisor stops (default 1.5 s, less than a lab delete waits).
	StopGrace time.Duration
	// StopDeadline, when set and it returns a time, replaces StopGrace: the
	// pod is being deleted and its container has until then (the pod's
	// deletionTimestamp) to exit before SIGKILL.
	StopDeadline func() (time.Time, bool)
	// Resume, when set, is the status of the pod's container under an
	// earlier supervisor that is gone (a node's kubelet that was killed):
	// the pod keeps its creation time and counts one restart more.
	Resume *labstore.PodStatus
}

// Supervise is a kubelet for one container with restartPolicy Always: it
// runs spec.Args with its output in spec.LogFile, restarts it with
// spec.Backoff whenever it exits, and writes the pod's status to the lab's
// store after every change. When ctx ends it stops the container (SIGTERM,
// then SIGKILL after StopGrace) and returns without writing again, so a pod
// being deleted is not brought back to life by its own status file.
func Supervise(ctx context.Context, spec SuperviseSpec) error {
	if len(spec.Args) == 0 {
		return fmt.Errorf("supervise %s: no command", spec.Name)
	}
	s, err := newSupervisor(ctx, spec)
	if err != nil {
		return fmt.Errorf("supervise %s: %w", spec.Name, err)
	}
	defer s.close()
	for {
		if stopped := s.runContainer(); stopped || ctx.Err() != nil {
			return nil
		}
		wait := s.noteExit()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		s.st.Restarts++
	}
}

// supervisor is one Supervise: the spec, where its container's output
// goes, and the pod's status it keeps writing.
type supervisor struct {
	ctx     context.Context
	spec    SuperviseSpec
	backoff Backoff
	delay   time.Duration // the current back-off (0 after a reset)
	log     io.Writer     // the supervisor's own lines
	out     io.Writer     // the container's output
	logFile *os.File      // out, when it is spec.LogFile
	st      labstore.PodStatus
	started time.Time // when the container last started
}

// newSupervisor fills the spec's defaults and opens the container's log.
func newSupervisor(ctx context.Context, spec SuperviseSpec) (*supervisor, error) {
	if spec.StopGrace == 0 {
		spec.StopGrace = 1500 * time.Millisecond
	}
	s := &supervisor{ctx: ctx, spec: spec, backoff: spec.Backoff.WithDefaults(), log: spec.Log, out: os.Stdout,
		st: labstore.PodStatus{Namespace: spec.Namespace, Name: spec.Name, Node: spec.Node, SupervisorPID: os.Getpid(), CreatedAt: time.Now()}}
	if s.log == nil {
		s.log = os.Stderr
	}
	if prev := spec.Resume; prev != nil {
		s.st.CreatedAt, s.st.Restarts, s.st.LastTermination = prev.CreatedAt, prev.Restarts+1, prev.LastTermination
	}
	if spec.LogFile != "" {
		f, err := OpenLog(spec.LogFile)
		if err != nil {
			return nil, err
		}
		s.logFile, s.out = f, f
	}
	return s, nil
}

func (s *supervisor) close() {
	if s.logFile != nil {
		s.logFile.Close()
	}
}

// write stores the pod's status, unless the supervisor is stopping.
func (s *supervisor) write() {
	if s.ctx.Err() != nil {
		return
	}
	if err := s.spec.Store.WritePodStatus(s.st); err != nil {
		fmt.Fprintf(s.log, "svclab supervise: %s: writing the status failed: %v\n", s.spec.Name, err)
	}
}

// runContainer starts the container and waits for it to end, noting how
// in the status. When the supervisor is told to stop meanwhile, it stops
// the container and reports stopped.
func (s *supervisor) runContainer() (stopped bool) {
	cmd := exec.Command(s.spec.Args[0], s.spec.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, s.out, s.out
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		// Like a container whose image has no such binary: it fails
		// to start, and is retried with back-off.
		fmt.Fprintf(s.log, "svclab supervise: %s: start %s: %v\n", s.spec.Name, s.spec.Args[0], err)
		s.st.LastTermination = &labstore.Termination{ExitCode: 128, Reason: "StartError", FinishedAt: time.Now(), Message: err.Error()}
		return false
	}
	s.st.State, s.st.Reason, s.st.PID, s.st.StartedAt, s.st.NextRestart = labstore.StateRunning, "", cmd.Process.Pid, s.started, time.Time{}
	s.write()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		s.st.LastTermination = termination(err, s.spec.LogFile)
		return false
	case <-s.ctx.Done():
		stopChild(cmd.Process, done, stopGrace(s.spec))
		return true
	}
}

// noteExit records the container's end in the status (terminated, to be
// restarted at once, or waiting in CrashLoopBackOff), logs it, and returns
// the wait before the restart.
func (s *supervisor) noteExit() time.Duration {
	ran := time.Since(s.started)
	t := s.st.LastTermination
	var wait time.Duration
	wait, s.delay = s.backoff.next(s.delay, ran)
	s.st.PID, s.st.StartedAt = 0, time.Time{}
	how := fmt.Sprintf("exit code %d", t.ExitCode)
	if t.Signal != "" {
		how = "killed by " + t.Signal
	}
	if wait == 0 {
		s.st.State, s.st.Reason = labstore.StateTerminated, t.Reason
		fmt.Fprintf(s.log, "svclab supervise: %s: container ended (%s, %s) after %s; restarting it\n", s.spec.Name, t.Reason, how, ran.Round(time.Millisecond))
	} else {
		s.st.State, s.st.Reason, s.st.NextRestart = labstore.StateWaiting, labstore.ReasonCrashLoopBackOff, time.Now().Add(wait)
		fmt.Fprintf(s.log, "svclab supervise: %s: container ended (%s, %s) after %s; back-off %s restarting failed container\n", s.spec.Name, t.Reason, how, ran.Round(time.Millisecond), wait)
	}
	s.write()
	return wait
}

// termination describes how a container ended, from Wait's error.
func termination(err error, logFile string) *labstore.Termination {
	t := &labstore.Termination{Reason: labstore.ReasonCompleted, FinishedAt: time.Now()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		t.Reason = labstore.ReasonError
		t.ExitCode = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// As a container runtime reports it: 128 + the signal.
			t.ExitCode = 128 + int(ws.Signal())
			t.Signal = signalName(ws.Signal())
		}
	default:
		t.Reason, t.ExitCode = labstore.ReasonError, 128
		t.Message = err.Error()
	}
	if t.Reason == labstore.ReasonError && t.Message == "" && logFile != "" {
		t.Message = LogTail(logFile, 5)
	}
	return t
}

// signalName names a signal as kill -l does ("SIGKILL").
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return s.String()
}

// stopGrace is how long the container has to exit once the supervisor is
// told to stop: until the pod's deletion deadline when it is being
// deleted, else StopGrace.
func stopGrace(spec SuperviseSpec) time.Duration {
	if spec.StopDeadline != nil {
		if deadline, ok := spec.StopDeadline(); ok {
			return max(time.Until(deadline), 0)
		}
	}
	return spec.StopGrace
}

// stopChild ends a container: SIGTERM, SIGKILL after grace, then waits.
func stopChild(p *os.Process, done <-chan error, grace time.Duration) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	_ = p.Kill()
	<-done
}
