// Package labstore keeps a lab's state on disk, under /run/svclab/labs/<name>
// (tmpfs: it goes away with a reboot, like the namespaces it describes).
//
// The layout is the lab's "API server" that the embedded proxy watches:
//
//	lab.yaml                 the topology the lab was created from
//	objects/<kind>/<ns>.<name>.yaml   one Kubernetes object per file (indented
//	                         JSON, which is YAML too; encoding.go)
//	objects/GENERATION       bumped after every change, written last
//	proxies/<node>.json      each node proxy's report of its last sync
//	pods/<pod>.json          each supervised process's state and restarts
//	                         (kube-proxy-<node> and the pods' servers)
//	run/<pod>.pid, logs/<pod>.log   the supervisors' pids, the processes' logs
//	intent.json              the journal: what the command holding the lock
//	                         is doing (or a killed one was doing) to the kernel
//
// Next to the directory, <name>.lock is the lab's lock: every command that
// changes the lab holds it from its first check to its last change.
//
// A lab's state is root's alone: directories 0700, files 0600, and an
// older svclab's world-readable lab is tightened when opened (private.go).
//
// Every file is written atomically (a temporary file renamed into place), so
// a reader sees the old or the new object, never half of one. An object's
// file name is shortened with a hash when <ns>.<name>.yaml would be too
// long. Every file the store writes or removes is resolved inside the lab's
// directory (Store.Confine): a name such as ".." or "../../x" is refused,
// never followed.
package labstore
