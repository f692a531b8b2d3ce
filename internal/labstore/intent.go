package labstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// intentFile is the lab's journal: at most one command's intent at a time
// (commands hold the lab's lock).
const intentFile = "intent.json"

// Ops a command records in its intent.
const (
	OpCreate         = "create"
	OpApply          = "apply"
	OpDeletePods     = "delete pods"
	OpDeleteObjects  = "delete objects"
	OpReap           = "remove terminated pods"
	OpRestartProxies = "restart proxies"
	OpDelete         = "delete"
)

// Phase says how far a command got: in PhasePrepare nothing of the change
// is stored yet and undoing it means removing Pods; in PhaseCommit the
// change is decided and finishing it means making the store hold Objects
// and then removing the pods in Stop.
type Phase string

const (
	PhasePrepare Phase = "prepare"
	PhaseCommit  Phase = "commit"
)

// Intent is a lab-changing command's journal entry: what it is about to do
// to the kernel, written atomically before it does it and cleared when it
// is done. A command (or svclab delete) that finds one left by a killed
// predecessor rolls it back (prepare) or forward (commit) before its own
// work, so no pod, namespace or process of the lab is ever unknown to the
// store.
type Intent struct {
	Op      string    `json:"op"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Phase   Phase     `json:"phase"`
	// Pods are the pods being made, recorded before their namespace and
	// server exist (in a commit, they are among Objects).
	Pods []*corev1.Pod `json:"pods,omitempty"`
	// Objects is what the store holds once the change is committed.
	Objects *State `json:"objects,omitempty"`
	// Delta, in place of Objects for a change of a few objects, is what
	// the commit writes, the other objects staying as they are.
	Delta *Delta `json:"delta,omitempty"`
	// Stop names the pods to remove once Objects is stored.
	Stop []string `json:"stop,omitempty"`
	// Nodes are the nodes whose proxy is being replaced.
	Nodes []string `json:"nodes,omitempty"`
}

// WriteIntent records a command's intent (atomically, replacing the last).
func (s *Store) WriteIntent(in *Intent) error {
	if in.PID == 0 {
		in.PID = os.Getpid()
	}
	if in.Started.IsZero() {
		in.Started = time.Now()
	}
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	return s.WriteFile(intentFile, append(data, '\n'))
}

// ReadIntent returns the recorded intent, or nil when no command is under
// way or interrupted.
func (s *Store) ReadIntent() (*Intent, error) {
	data, err := os.ReadFile(s.Path(intentFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	in := &Intent{}
	if err := json.Unmarshal(data, in); err != nil {
		return nil, fmt.Errorf("lab store %s: %w", s.Path(intentFile), err)
	}
	return in, nil
}

// ClearIntent removes the intent once the command is done (or undone).
func (s *Store) ClearIntent() error {
	if err := os.Remove(s.Path(intentFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
