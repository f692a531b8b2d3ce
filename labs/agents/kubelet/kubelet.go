package kubelet

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/svclab/svclab/internal/labstore"
)

// SocketName is the abstract unix socket a kubelet answers on, in its
// node's network namespace (abstract names are per namespace: one per
// node, and nothing on the host's file system).
const SocketName = "@svclab-kubelet"

// Kubelet runs the servers of one node's pods.
type Kubelet struct {
	store *labstore.Store
	node  string
	pid   int
	log   io.Writer

	mu    sync.Mutex // one sync at a time
	pods  map[string]runningPod
	specs specCache // what the last sync read
}

// runningPod is a pod the kubelet runs: a server on its sockets
// (podServer) or a process of its own (processPod).
type runningPod interface {
	// terminate tells the pod it terminates, with its deadline.
	terminate(deadline time.Time)
	// kill stops the pod at once and waits until it has.
	kill()
}

// Run is `svclab kubelet`: it brings the node's pods up as their specs say,
// then answers syncs until ctx ends, when it closes every server (the lab
// is being deleted, or the kubelet stopped) and returns.
func Run(ctx context.Context, store *labstore.Store, node string, log io.Writer) error {
	if errs := validation.IsDNS1123Subdomain(node); len(errs) > 0 {
		return fmt.Errorf("kubelet: node name %q: %s", node, strings.Join(errs, "; "))
	}
	k := &Kubelet{store: store, node: node, pid: os.Getpid(), log: log, pods: map[string]runningPod{}}
	ln, err := net.Listen("unix", SocketName)
	if err != nil {
		return fmt.Errorf("kubelet of node %s: %w", node, err)
	}
	defer ln.Close()
	// A kubelet that starts brings back the pods its node had.
	if failed := k.Sync(); len(failed) > 0 {
		fmt.Fprintf(log, "svclab kubelet: %s: pods that did not start: %v\n", node, failed)
	}
	fmt.Fprintf(log, "svclab kubelet: %s: serving %d pods\n", node, len(k.pods))
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			break
		}
		go k.answer(conn)
	}
	k.stopAll()
	return nil
}

// answer reads one request ("sync") and answers it with a Reply.
func (k *Kubelet) answer(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute)) //nolint:errcheck // a stuck client only loses its answer
	line, err := bufio.NewReader(io.LimitReader(conn, 64)).ReadString('\n')
	if err != nil || line != "sync\n" {
		json.NewEncoder(conn).Encode(Reply{Error: fmt.Sprintf("want \"sync\", got %q", line)}) //nolint:errcheck // the client is told or gone
		return
	}
	json.NewEncoder(conn).Encode(Reply{Failed: k.Sync()}) //nolint:errcheck // the client is told or gone
}

// Sync makes the node's servers what the specs say and returns the pods
// whose server could not start, with why: servers of specs that are gone
// are closed (and waited for), a spec with a deadline has its server told
// that the pod terminates, and a spec without one has its server started
// (bound to its ports when Sync returns). A spec with a deadline and no
// server is done: it is not started.
func (k *Kubelet) Sync() map[string]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	specs, err := k.specs.read(k.store, k.node)
	if err != nil {
		return map[string]string{"": err.Error()}
	}
	for name, p := range k.pods {
		if _, ok := specs[name]; !ok {
			p.kill()
			delete(k.pods, name)
		}
	}
	failed := map[string]string{}
	for _, name := range sortedKeys(specs) {
		spec, p := specs[name], k.pods[name]
		switch {
		case p != nil && spec.Deadline != nil:
			p.terminate(*spec.Deadline)
		case p == nil && spec.Deadline == nil:
			started, err := k.start(spec)
			if err != nil {
				failed[name] = err.Error()
				continue
			}
			k.pods[name] = started
		}
	}
	return failed
}

// start starts a pod's server, or its process.
func (k *Kubelet) start(spec Spec) (runningPod, error) {
	if spec.runsProcess() {
		return k.startProcess(spec)
	}
	return k.startServer(spec)
}

// stopAll closes every server, as the node's containers end with their
// kubelet's host.
func (k *Kubelet) stopAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for name, p := range k.pods {
		p.kill()
		delete(k.pods, name)
	}
}

func sortedKeys(m map[string]Spec) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
