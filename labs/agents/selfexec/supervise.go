package selfexec

import (
	"github.com/spf13/pflag"

	"github.com/svclab/svclab/labs/agents/process"
)

// Supervise is `svclab supervise … -- ARGV…`: the lab's kubelet for one
// pod, run in the pod's (or the node's) network namespace. It runs ARGV,
// restarts it with back-off when it exits, and writes the pod's status to
// the lab's store.
type Supervise struct {
	// LabDir is the lab's state directory (the status goes to its pods/).
	LabDir string
	// Namespace, Pod and Node name the pod the process is.
	Namespace, Pod, Node string
	// Log is the process's log file (its output; a crash's message is its
	// last lines).
	Log string
	// Backoff is the restart back-off (zero fields: the kubelet's values).
	Backoff process.Backoff
	// Argv is the supervised program and its arguments.
	Argv []string
}

// Subcommand implements Command.
func (*Supervise) Subcommand() []string { return []string{"supervise"} }

// AddFlags implements Command.
func (s *Supervise) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.LabDir, "lab-dir", "", "the lab's state directory")
	fs.StringVar(&s.Namespace, "namespace", "default", "the pod's namespace")
	fs.StringVar(&s.Pod, "pod", "", "the pod's name")
	fs.StringVar(&s.Node, "node", "", "the pod's node")
	fs.StringVar(&s.Log, "log", "", "the process's log file")
	fs.DurationVar(&s.Backoff.Initial, "backoff-initial", process.DefaultBackoff.Initial, "the first restart back-off (after the immediate first restart)")
	fs.DurationVar(&s.Backoff.Max, "backoff-max", process.DefaultBackoff.Max, "the longest restart back-off")
	fs.DurationVar(&s.Backoff.Reset, "backoff-reset", process.DefaultBackoff.Reset, "a process that ran this long restarts its back-off from the start")
}

// Args implements Positional.
func (s *Supervise) Args() []string { return append([]string{"--"}, s.Argv...) }

// Kubelet is `svclab kubelet --lab-dir DIR --node NODE`: a netns lab node's
// kubelet, which runs the servers of the node's pods (labs/agents/kubelet),
// in the node's network namespace under a supervisor of its own.
type Kubelet struct {
	// LabDir is the lab's state directory (the specs, statuses and logs).
	LabDir string
	// Node is the node whose pods it runs.
	Node string
}

// Subcommand implements Command.
func (*Kubelet) Subcommand() []string { return []string{"kubelet"} }

// AddFlags implements Command.
func (k *Kubelet) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&k.LabDir, "lab-dir", "", "the lab's state directory")
	fs.StringVar(&k.Node, "node", "", "the node whose pods it runs")
}
