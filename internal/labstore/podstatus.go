package labstore

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// Container states, as a pod's containerStatuses[].state says them.
const (
	StateRunning    = "Running"
	StateWaiting    = "Waiting"
	StateTerminated = "Terminated"
)

// Reasons a supervisor reports, as the kubelet names them.
const (
	ReasonCrashLoopBackOff = "CrashLoopBackOff" // waiting out the back-off before a restart
	ReasonError            = "Error"            // exited non-zero (or killed by a signal)
	ReasonCompleted        = "Completed"        // exited 0
)

// PodStatus is what a lab process's supervisor (`svclab supervise`, the
// lab's kubelet) reports about the one container it runs: written after
// every start, exit and back-off, read by `svclab get pods` and by `apply`
// while it waits for the node proxies.
type PodStatus struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node,omitempty"`
	// SupervisorPID is the supervisor's pid; PID the container's while it
	// runs (0 otherwise).
	SupervisorPID int `json:"supervisorPID"`
	PID           int `json:"pid,omitempty"`
	// State is Running, Waiting or Terminated; Reason says why it waits
	// (CrashLoopBackOff) or how it ended (Error, Completed).
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Restarts counts the container's restarts (RESTARTS in kubectl).
	Restarts int `json:"restarts"`
	// CreatedAt is when the supervisor started (the pod's AGE); StartedAt
	// when the current container started.
	CreatedAt time.Time `json:"createdAt"`
	StartedAt time.Time `json:"startedAt,omitempty"`
	// NextRestart is when a waiting container is started again.
	NextRestart     time.Time    `json:"nextRestart,omitempty"`
	LastTermination *Termination `json:"lastTermination,omitempty"`
}

// Termination is how a container ended (lastState.terminated).
type Termination struct {
	ExitCode   int       `json:"exitCode"`
	Signal     string    `json:"signal,omitempty"`
	Reason     string    `json:"reason"`
	FinishedAt time.Time `json:"finishedAt"`
	// Message is the end of the container's log, as the kubelet's
	// FallbackToLogsOnError termination message policy takes it.
	Message string `json:"message,omitempty"`
}

func podStatusFile(name string) string { return filepath.Join("pods", name+".json") }

// WritePodStatus records a supervised process's status atomically.
func (s *Store) WritePodStatus(st PodStatus) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return s.WriteFile(podStatusFile(st.Name), append(data, '\n'))
}

// PodStatus returns the status a pod's supervisor last wrote; ok is false
// when there is none (no supervisor has started yet, or the pod has none).
func (s *Store) PodStatus(name string) (st PodStatus, ok bool, err error) {
	data, err := os.ReadFile(s.Path(podStatusFile(name)))
	if errors.Is(err, os.ErrNotExist) {
		return PodStatus{}, false, nil
	}
	if err != nil {
		return PodStatus{}, false, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return PodStatus{}, false, err
	}
	return st, true, nil
}

// ClearPodStatus forgets a pod's status (when the pod is deleted).
func (s *Store) ClearPodStatus(name string) error {
	err := os.Remove(s.Path(podStatusFile(name)))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
