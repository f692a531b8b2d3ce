package netns

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/netns/network"
)

// A lab's long-running processes (a node's kubelet, a DNS pod's server)
// run under their own supervisor, `svclab supervise`, in the same network
// namespace, which restarts them with back-off when they exit and writes
// their state to the store's pods/<pod>.json. The pid file run/<pod>.pid is
// the supervisor's; for a pod whose server a node's kubelet runs
// (kubelets.go), the kubelet's, there while the server runs. A node's
// proxy is a process the node's kubelet runs and supervises (proxies.go):
// it has no pid file, and the kubelet's supervisor is what runs it.

// supervised is one supervised process: its pod and where it runs.
type supervised struct {
	namespace, pod, node string
	host                 string // the lab host whose network namespace it runs in
	log                  string
	argv                 []string
}

func (l *Lab) supervisorPIDFile(pod string) string { return l.Store.Path("run", pod+".pid") }

// startSupervised starts a supervisor for s (forgetting any status of an
// earlier one) and returns its pid.
func (l *Lab) startSupervised(s supervised, opts Options) (int, error) {
	if err := l.Store.ClearPodStatus(s.pod); err != nil {
		return 0, err
	}
	args := selfexec.Argv(opts.Binary, &selfexec.Supervise{
		LabDir: l.Store.Dir, Namespace: s.namespace, Pod: s.pod, Node: s.node, Log: s.log,
		Backoff: opts.RestartBackoff, Argv: s.argv,
	})
	return process.Start(process.Spec{
		Namespace: network.NamespaceName(l.Name(), s.host),
		Args:      args,
		LogFile:   s.log,
		PIDFile:   l.supervisorPIDFile(s.pod),
	})
}

// stopSupervised ends a pod's supervisor (which stops its process), then the
// process itself if it outlived the supervisor, and forgets its status. A
// status whose server is its supervisor is a node kubelet's pod (a stop of
// it cut short left it without its spec): the kubelet serves other pods
// too and is not stopped; a sync of it closes what is left of the pod.
func (l *Lab) stopSupervised(pod string) error {
	if served, err := l.stopServedPod(pod); served {
		return err // a process pod of a node's kubelet (kube-proxy)
	}
	st, ok, _ := l.Store.PodStatus(pod)
	if servedByKubelet(st, ok) {
		l.Store.RemoveFile("run", pod+".pid") //nolint:errcheck // best effort: the namespace is what matters
		if err := l.Store.ClearPodStatus(pod); err != nil {
			return err
		}
		l.syncKubeletOnce(st.Node)
		return nil
	}
	if pid := l.supervisorPID(pod); pid != 0 {
		process.StopPID(pid, 3*time.Second)
	}
	if ok && st.PID != 0 {
		process.StopPID(st.PID, time.Second)
	}
	l.Store.RemoveFile("run", pod+".pid") //nolint:errcheck // best effort: the namespace is what matters
	return l.Store.ClearPodStatus(pod)
}

// servedByKubelet reports whether a pod's status is a node kubelet's: its
// server's pid is its supervisor's (a supervised pod's server is a child
// of its supervisor). Such a pid is never signalled for one pod.
func servedByKubelet(st labstore.PodStatus, ok bool) bool {
	return ok && st.SupervisorPID != 0 && st.PID == st.SupervisorPID
}

// supervisorPID returns the pid of a pod's supervisor (0 if it is not running).
func (l *Lab) supervisorPID(pod string) int {
	data, err := os.ReadFile(l.supervisorPIDFile(pod))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pid == 0 || !process.Alive(pid) {
		return 0
	}
	return pid
}

// podState is a supervised pod as its supervisor last reported it, checked
// against the kernel: a supervisor that is gone leaves a status that no
// longer holds.
type podState struct {
	labstore.PodStatus
	// Found is false when no supervisor has reported yet.
	Found bool
	// SupervisorGone is true when the supervisor's process is not running.
	SupervisorGone bool
}

func (l *Lab) podState(pod string) (podState, error) {
	st, ok, err := l.Store.PodStatus(pod)
	if err != nil {
		return podState{}, err
	}
	return podState{PodStatus: st, Found: ok, SupervisorGone: l.servingPID(pod) == 0}, nil
}

// servingPID is the pid of the process that runs a pod and brings it back
// (0 when none runs): the supervisor's of its pid file, or for a
// kube-proxy pod without one, the supervisor of its node's kubelet, which
// runs the proxy (a kubelet restarting is no failure of the proxy's).
func (l *Lab) servingPID(pod string) int {
	if pid := l.supervisorPID(pod); pid != 0 {
		return pid
	}
	if node, ok := l.proxyPodNode(pod); ok {
		if _, err := os.Stat(l.supervisorPIDFile(pod)); errors.Is(err, os.ErrNotExist) {
			return l.supervisorPID(kubeletPod(node))
		}
	}
	return 0
}

// running reports whether the pod's process runs now.
func (s podState) running() bool {
	return s.Found && !s.SupervisorGone && s.State == labstore.StateRunning && s.PID != 0 && process.Alive(s.PID)
}

// failure says why the pod's process is not running and will not be soon
// ("" when it runs, or is about to be restarted at once): a supervisor
// that is gone, or a container waiting out its back-off.
func (s podState) failure() string {
	switch {
	case s.SupervisorGone:
		return "the process that serves it (its supervisor, or its node's kubelet) is not running (svclab delete pod restarts it)"
	case !s.Found:
		return ""
	case s.State == labstore.StateWaiting:
		msg := s.Reason
		if t := s.LastTermination; t != nil {
			msg += fmt.Sprintf(": last exit %s, code %d", t.Reason, t.ExitCode)
			if t.Signal != "" {
				msg += " (" + t.Signal + ")"
			}
		}
		if !s.NextRestart.IsZero() {
			msg += fmt.Sprintf("; restart %d in %s", s.Restarts+1, time.Until(s.NextRestart).Round(time.Second))
		}
		return msg
	}
	return ""
}

// PodServerRunning reports whether a pod's server runs: the process that
// serves it (its supervisor, or its node's kubelet) is alive and has not
// said the server stopped. A terminating pod is removed once it is false.
func (l *Lab) PodServerRunning(pod string) bool { return l.supervisorPID(pod) != 0 }
