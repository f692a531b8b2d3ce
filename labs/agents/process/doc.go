// Package process starts and stops a lab's long-running programs (each
// node's proxy, each pod's server) inside the lab's network namespaces.
//
// A program is started inside a namespace (forked from a thread switched
// into it; see Start), in a session of its own, with its output in the
// lab's log directory. Stopping
// does not trust pid files: it finds every process whose network namespace
// is one of the lab's (as `ip netns pids` does), so a lab whose CLI crashed
// or whose pid files are gone is still cleaned completely; parents (the
// supervisors) are stopped before their children.
//
// Supervise is the lab's kubelet: it runs one process, restarts it with the
// kubelet's back-off whenever it exits, and reports its state, restarts and
// last exit to the lab's store.
package process
