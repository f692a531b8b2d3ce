// Package kubelet is a netns lab node's kubelet for its pods' servers: one
// process per node (`svclab kubelet`, itself run by a supervisor as the
// node proxy is) that runs the agnhost-netexec-compatible server of every
// pod of its node in-process, each on sockets opened in the pod's network
// namespace. A pod used to be two processes (a supervisor and a server,
// 5.5–6 MiB of memory of their own each and ~15 ms of CPU to start); a
// node of ten pods is now two processes in all.
//
// The lab says what its node runs in spec files, one per pod
// (kubelet/<node>/<pod>.json in the lab's store; Spec), and then asks the
// node's kubelet to sync (Sync, over a socket in the node's namespace): the
// kubelet starts the server of every spec it does not run yet, tells the
// server of a spec with a deadline that its pod terminates, stops at once
// the server of a spec that is gone, and answers when that is done — a
// started server is bound to its ports by then. A kubelet that starts
// (after a crash of its own: its supervisor restarts it) syncs before it
// answers anything, so the pods of its node come back, each with one
// restart more, as a container whose host died.
//
// Each pod keeps what its own supervisor gave it: its log (logs/<pod>.log,
// the server's lines and the kubelet's about it), its status in the
// store's pods/<pod>.json (Running, restarts, last termination; what `get
// pods` shows), and run/<pod>.pid while its server runs (the kubelet's
// pid: the pod is gone when that file is, or names a process that is
// not). A terminating pod's server goes on serving for its
// --delay-shutdown (agnhost's SIGTERM handling), then shuts down
// gracefully, and is closed outright at the pod's deadline (the end of its
// grace period, as the kubelet's SIGKILL).
package kubelet
