package upstream

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/proxy/model/modeltest"
)

// Steps a sync benchmark worker takes (syncRequest.Op).
const (
	opCold     = "cold"
	opEndpoint = "endpoint"
	opService  = "service"
	opNoop     = "noop"
	opFull     = "full"
	opMemory   = "memory"
)

// syncRequest is one step the coordinator asks a worker for; K numbers
// the change, so that both workers make the same one.
type syncRequest struct {
	Op string `json:"op"`
	K  int    `json:"k"`
}

// syncReply is a worker's answer: how long the event took to reach the
// kernel, what the proxy ran meanwhile, or its memory.
type syncReply struct {
	// SyncNS is event → the proxy's sync returned.
	SyncNS int64 `json:"sync_ns,omitempty"`
	// VisibleNS is event → the change seen in the kernel (SyncNS for a
	// change that changes nothing).
	VisibleNS int64          `json:"visible_ns,omitempty"`
	Execs     map[string]int `json:"execs,omitempty"`
	Memory    *sideMemory    `json:"memory,omitempty"`
	Error     string         `json:"error,omitempty"`
}

// sideMemory is a worker process's memory: the proxy, its objects and the
// benchmark's copy of the generated cluster (the same on both sides).
type sideMemory struct {
	RSSBytes     int64 `json:"rss_bytes"`
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// HeapBytes is the Go heap in use after a collection.
	HeapBytes int64 `json:"heap_bytes"`
}

// syncWorker is one side of the benchmark in its own network namespace:
// the generated cluster, the proxy, and the check of the kernel.
type syncWorker struct {
	side     syncSide
	check    kernelCheck
	counts   *execCounts
	services int
	svcs     []*corev1.Service
	slices   []*discoveryv1.EndpointSlice
	version  int
}

// RunSyncWorker is the worker process: it sets up its network namespace
// (made by the coordinator), builds side's proxy of mode over the
// namespace's kernel, and answers the coordinator's steps, one JSON line
// each, until its input ends.
func RunSyncWorker(side, mode string, services, endpoints int, in io.Reader, out io.Writer) error {
	if err := SetUpNetns(); err != nil {
		return err
	}
	counts := newExecCounts()
	s, err := newSyncSide(side, mode, counts)
	if err != nil {
		return err
	}
	w := &syncWorker{side: s, counts: counts, services: services, version: 1}
	w.svcs, w.slices = modeltest.Cluster(services, endpoints)
	if w.check, err = newKernelCheck(mode, w.svcs); err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var req syncRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("request %q: %w", sc.Text(), err)
		}
		if err := enc.Encode(w.step(req, endpoints)); err != nil {
			return err
		}
	}
	return sc.Err()
}

// step runs one request; a failure is in the reply.
func (w *syncWorker) step(req syncRequest, endpoints int) syncReply {
	if req.Op == opMemory {
		m, err := readMemory()
		if err != nil {
			return syncReply{Error: err.Error()}
		}
		return syncReply{Memory: m}
	}
	before := w.counts.snapshot()
	start := time.Now()
	visible, err := w.change(req, endpoints)
	synced := time.Since(start)
	if err == nil {
		err = visible()
	}
	reply := syncReply{SyncNS: synced.Nanoseconds(), VisibleNS: time.Since(start).Nanoseconds(), Execs: w.counts.since(before)}
	if err != nil {
		reply.Error = err.Error()
	}
	return reply
}

// change makes req's event and sync; it returns the kernel check of what
// changed.
func (w *syncWorker) change(req syncRequest, endpoints int) (func() error, error) {
	switch req.Op {
	case opCold:
		last := w.services - 1
		err := w.side.cold(w.svcs, w.slices)
		return func() error {
			if err := w.check.service(w.svcs[last]); err != nil {
				return err
			}
			return w.check.endpoint(w.slices[last])
		}, err
	case opEndpoint:
		i := w.pick(req.K)
		old := w.slices[i]
		new := w.bumped(modeltest.WithEndpointChanged(old, 1<<20+req.K))
		w.slices[i] = new
		return func() error { return w.check.endpoint(new) }, w.side.updateSlice(old, new)
	case opService:
		svc, sl := modeltest.ClusterObjects(w.services+req.K, endpoints)
		return func() error { return w.check.service(svc) }, w.side.addService(svc, sl)
	case opNoop:
		i := w.pick(req.K + 1)
		old := w.slices[i]
		new := w.bumped(old.DeepCopy())
		w.slices[i] = new
		return func() error { return nil }, w.side.updateSlice(old, new)
	case opFull:
		first := w.svcs[0]
		return func() error { return w.check.service(first) }, w.side.full()
	}
	return nil, fmt.Errorf("unknown step %q", req.Op)
}

// pick is the k-th change's slice: spread over the cluster, the same in
// both workers.
func (w *syncWorker) pick(k int) int { return (k*7919 + 13) % w.services }

// bumped gives sl a new resourceVersion, as an update from the API has.
func (w *syncWorker) bumped(sl *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	w.version++
	sl.ResourceVersion = strconv.Itoa(w.version)
	return sl
}

// readMemory reads VmRSS and VmHWM of this process, and the Go heap in
// use after a collection.
func readMemory() (*sideMemory, error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	m := &sideMemory{HeapBytes: int64(ms.HeapAlloc)}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			m.RSSBytes = kb << 10
		case "VmHWM":
			m.PeakRSSBytes = kb << 10
		}
	}
	return m, nil
}
