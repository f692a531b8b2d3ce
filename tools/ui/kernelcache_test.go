package ui

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestStateReadsKernelsOnceForConcurrentRequests: 1000 pages asking at
// once while the kernels are being read (every request has read the
// store) make one reading of the kernels, which all of them get.
func TestStateReadsKernelsOnceForConcurrentRequests(t *testing.T) {
	const requests = 1000
	src := &fakeSource{storesWanted: requests, allStored: make(chan struct{}), holdKernels: make(chan struct{})}
	s, do := testServer(t, src)
	s.kernels.maxAge = time.Hour // a straggler gets the reading, however slow the machine
	page := pageGet(t, s)
	codes := make(chan int, requests)
	var wg sync.WaitGroup
	for range requests {
		wg.Go(func() {
			code, out := do("GET", "/api/state", "", page)
			var st State
			if code == http.StatusOK && (json.Unmarshal([]byte(out), &st) != nil || len(st.Nodes[0].Chains) != 1) {
				code = -1
			}
			codes <- code
		})
	}
	<-src.allStored // every request is past the store, at the kernels
	close(src.holdKernels)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Errorf("a GET /api/state: %d, want 200 with the node's chains", code)
			break
		}
	}
	if n := src.kernelReads(); n != 1 {
		t.Errorf("%d concurrent GET /api/state read the kernels %d times, want once", requests, n)
	}
}

// TestStateReadsStoreOnEveryRequest: what the store holds (the trace) is
// shown at the next request, while the kernels' reading is still served;
// the kernels are read again as soon as the store records a change or the
// page has sent traffic, never served for an older version of the store.
func TestStateReadsStoreOnEveryRequest(t *testing.T) {
	src := &fakeSource{version: "v1"}
	s, do := testServer(t, src)
	s.kernels.maxAge = time.Hour
	page := pageGet(t, s)
	state := func() State {
		t.Helper()
		code, out := do("GET", "/api/state", "", page)
		var st State
		if code != http.StatusOK || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("GET /api/state: %d %s", code, out)
		}
		return st
	}
	if st := state(); st.Trace.Present || src.kernelReads() != 1 {
		t.Fatalf("first state: trace %+v, %d readings of the kernels", st.Trace, src.kernelReads())
	}
	src.setTrace([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))
	if st := state(); !st.Trace.Present {
		t.Errorf("the trace the store holds is not in the next state")
	}
	if n := src.kernelReads(); n != 1 {
		t.Errorf("the kernels were read %d times for one version of the store, want once", n)
	}
	src.setVersion("v2")
	state()
	if n := src.kernelReads(); n != 2 {
		t.Errorf("after the store changed the kernels were read %d times, want 2", n)
	}
	if code, out := do("POST", "/api/traffic", `{"service":"default/web:80","count":3}`, pageHeaders(t, s)); code != http.StatusOK {
		t.Fatalf("POST /api/traffic: %d %s", code, out)
	}
	state()
	if n := src.kernelReads(); n != 3 {
		t.Errorf("after a traffic run the kernels were read %d times, want 3", n)
	}

	// A reading in progress for v2 is not served to a request that saw v3:
	// that one waits for it to end, then has its own.
	src.mu.Lock()
	src.holdKernels, src.kernelsStarted = make(chan struct{}), make(chan struct{})
	src.mu.Unlock()
	src.setVersion("v2b") // the first request's reading (4) is not the cached one
	first := make(chan int)
	go func() { code, _ := do("GET", "/api/state", "", page); first <- code }()
	<-src.kernelsStarted // reading 4, for v2b, in progress
	src.mu.Lock()
	src.version, src.storesWanted, src.allStored = "v3", src.stores+1, make(chan struct{})
	stored := src.allStored
	src.mu.Unlock()
	second := make(chan int)
	go func() { code, _ := do("GET", "/api/state", "", page); second <- code }()
	<-stored                      // the second request saw v3
	src.holdKernels <- struct{}{} // reading 4 ends
	if code := <-first; code != http.StatusOK {
		t.Errorf("the request of reading 4: %d", code)
	}
	<-src.kernelsStarted // reading 5, for v3
	src.holdKernels <- struct{}{}
	if code := <-second; code != http.StatusOK {
		t.Errorf("the request that saw v3: %d", code)
	}
	if n := src.kernelReads(); n != 5 {
		t.Errorf("the kernels were read %d times, want 5", n)
	}
}
