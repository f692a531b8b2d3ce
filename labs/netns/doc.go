// Package netns is the netns lab backend: it brings a lab of network
// namespaces to life and takes it down. It builds the lab's network from
// its topology (package network), keeps its objects in the lab store
// (internal/labstore), starts one embedded proxy per node and one backend
// server per pod (labs/agents/process), and applies ordinary Kubernetes
// manifests to it (package workload).
//
// Every step that fails leaves nothing half-built: Create deletes what it
// made, and Delete is idempotent and works from the kernel's view (the
// namespaces with the lab's prefix), so it also cleans a lab whose CLI or
// processes were killed.
//
// # The lab transaction
//
// Every command that changes a lab holds the lab's lock from its first
// check to its last change and records its intent in the lab's journal
// (labstore.Intent, intent.json) before it touches the kernel. A change of
// the lab's objects (Apply and ApplyManifests, DeletePods, DeleteManifest,
// and the reap of finished pods) runs update, then commit (apply.go),
// through the phases below, in order. Ctrl-C means SIGINT or SIGTERM: the
// CLI (tools/cli labChange) cancels the command's context, and a second
// signal exits at once, leaving what a SIGKILL at that point leaves. "The
// next command" is the next that takes the lock through Lab.lock: a change
// of objects or RestartProxies; a change of objects is "the next change".
// SVCLAB_TEST_CRASH_AT (CrashEnv) kills svclab at the crash points named in
// brackets; SVCLAB_TEST_HOLD_AT (HoldEnv) holds it at a hold point until it
// is interrupted.
//
//	phase, functions            side effect there           Ctrl-C there                 SIGKILL leaves; the next command
//	--------------------------  --------------------------  ---------------------------  --------------------------------
//	1 lock                      none of its own; a killed   waiting for the lock: gives  nothing new (the flock dies with
//	  lock: Store.Lock, then    predecessor's intent is     up, nothing changed. In      the process); a predecessor's
//	  recover: settle           settled first: a prepare    recover: settle runs to its  intent stays until settled
//	                            rolled back, a commit       end, its proxy wait stops    (each step of settle may be
//	                            finished, a restart         with a warning, and the      repeated)
//	                            finished; a create or       command goes on with its
//	                            delete refuses the command  context done (rows 4-6)
//
//	2 compute the change        none (reapFinished: a       not looked at (in            nothing (reapFinished: as its
//	  ReadObjects,              transaction of its own,     reapFinished: as its rows)   rows)
//	  reapFinished, change      rows 3-8, for terminating
//	  (workload, pure)          pods that are done)
//
//	3 journal intent            the journal only: the new   not looked at                intent "prepare" (get labs:
//	  commit: WriteIntent       pods, named before any                                   incomplete, the next command
//	  {prepare, Pods}           exists                                                   settles it); the next command's
//	  [update:intent]                                                                    settle removes those pods, made
//	                                                                                     or not (stopPod): rolled back,
//	                                                                                     the store untouched
//
//	4 kernel changes            new pods only: namespace,   startPod stops; commit sees  as 3
//	  startPod: AttachPod       link, resolv.conf, server   ctx.Err: rollBack (prepare)
//	  [pod:attached],           (nothing removed; not       removes the pods made so
//	  startSupervised,          stored, so no proxy sends   far, the store untouched:
//	  waitListening             to them yet)                "rolled back: pod/x
//	  [update:pod-started]                                  removed", exit 130 (143).
//	                                                        After the last new pod (or
//	                                                        with none) commit looks
//	                                                        once more before 5: the
//	                                                        same roll back
//
//	5 store objects: commit     the store: what the         not looked at. A failed      intent "commit" (get labs:
//	  WriteIntent{commit,       proxies program and get     write rolls back (rollBack:  incomplete, the next command
//	  Objects, Stop}            pods shows: new pods and    the journal's commit turned  settles it); the next command's
//	  [update:commit],          Services, deleted pods      to the old objects, stored,  finishCommitted writes Objects
//	  Store.WriteObjects:       Terminating, gone pods      the proxies waited for, the  again, waits for the proxies,
//	  a new generation          absent                      new pods removed)            sends SIGTERM as 7, then settle
//	  [update:objects]                                                                   removes the pods in Stop, clears
//	                                                                                     the journal: "finished"
//
//	6 wait for the proxies'     none (reads each node's     committedButInterrupted:     as 5
//	  acks: waitForProxies      status: healthy at the      the change stands (an
//	  (Store.ProxyStatuses)     generation, from the        accepted write) and the
//	                            running proxy)              commit stays in the
//	                                                        journal; says what is left
//	                                                        (pod x still terminating,
//	                                                        still to be removed), exit
//	                                                        130 (143); no SIGTERM and
//	                                                        no removal now. A proxy's
//	                                                        failure or timeout is no
//	                                                        interruption: 7 and 8 run,
//	                                                        then commit returns it
//
//	7 side effects after the    every Terminating pod's     not looked at: runs to its   as 5: the next command's
//	  ack: signalTerminating,   server told (its kubelet's  end                          recover waits for the proxies,
//	  stopPod of each gone      sync, or SIGTERM to its                                  tells them again (those told
//	  pod [update:pod-stopped]  supervisor; again to                                     already too), then removes
//	                            earlier ones; closed at the                              the gone pods left
//	                            deadline); gone pods'
//	                            server, namespace, link and
//	                            resolv.conf removed
//
//	8 journal done              the journal is empty; the   -                            nothing in the journal;
//	  Store.ClearIntent         Terminating pods in the                                  Terminating pods as 9
//	                            store are the record of
//	                            what is left
//
//	9 wait for the deleted      none but reaps: a pod       stops waiting: pod x still   the pods stay Terminating in the
//	  pods (DeletePods,         whose server has exited or  terminating, the next        store, nothing in the journal;
//	  DeleteManifest; not       whose deadline has passed   command removes it once its  the next change's reapFinished
//	  --wait=false): waitGone   is removed by a reap        server has stopped; exit     removes those done, its 7 sends
//	                            (update, rows 1-8)          130 (143)                    SIGTERM to the rest
//
// The other lab-changing commands journal themselves whole:
//
//   - Create (create): lock, journalCreate (intent "create"
//     [create:intent], then lab.yaml, the bytes it validated),
//     network.Build [create:network], the cluster DNS objects, resolv.conf
//     files, Store.WriteObjects, startProxy on each node [create:proxies],
//     the DNS pod, waitForProxies, ClearIntent. Ctrl-C: create fails at its
//     next look at the context (after the network, in a pod's start or the
//     proxy wait) and Create removes everything (deleteLocked: "rolled back:
//     lab x deleted"). SIGKILL leaves the intent: get labs says incomplete
//     (create interrupted), the next command and a second create refuse,
//     and Delete removes what is left.
//   - Delete (deleteLocked): lock (without a context), intent "delete"
//     [delete:intent], every process of the lab's namespaces
//     [delete:processes], resolv.conf files, network.Destroy
//     [delete:namespaces], the state, the lock file. Ctrl-C is not looked
//     at: it runs to its end. SIGKILL leaves the intent (the next command
//     refuses), or the namespaces of a lab that had no state; the next
//     Delete finishes it.
//   - RestartProxies: lock (row 1), intent "restart proxies" naming the
//     nodes, stopSupervised [restart:stopped] and startProxy on each,
//     ClearIntent, waitForProxies. Ctrl-C cuts only the last wait short.
//     SIGKILL leaves the intent; the next command's recover starts the
//     named nodes' proxies that do not run, then clears it.
package netns
