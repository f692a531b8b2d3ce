package iptables

import (
	"runtime"
	"sync"

	"github.com/svclab/svclab/proxy/model"
)

// refreshCache returns the fragments for servicePorts, reusing the cached
// one of every service port that did not change.
func (r *Renderer) refreshCache(servicePorts []*model.ServicePort, large bool) []*fragment {
	prev := r.rendered
	next := make([]*fragment, len(servicePorts))
	var todo []int
	maxEndpoints := 0
	j := 0
	for i, sp := range servicePorts {
		// Usually prev[j] has sp's name already; only search when not.
		for j < len(prev) && prev[j].sp.Name != sp.Name && prev[j].sp.Name.Compare(sp.Name) < 0 {
			j++
		}
		if j < len(prev) && prev[j].largeCluster == large && prev[j].sp.Equal(sp) {
			next[i] = prev[j]
			continue
		}
		todo = append(todo, i)
		maxEndpoints = max(maxEndpoints, len(sp.Endpoints))
	}
	r.render(servicePorts, todo, next, large, maxEndpoints)
	return next
}

// minServicePortsPerWorker keeps small renders on one goroutine, where
// starting others costs more than it saves.
const minServicePortsPerWorker = 256

// render fills next[i] for every i in todo, spreading large batches over
// GOMAXPROCS goroutines.
func (r *Renderer) render(servicePorts []*model.ServicePort, todo []int, next []*fragment, large bool, maxEndpoints int) {
	workers := min(runtime.GOMAXPROCS(0), len(todo)/minServicePortsPerWorker)
	if workers <= 1 {
		for _, i := range todo {
			next[i] = r.writers[0].render(servicePorts[i], large)
		}
		return
	}
	// Fill the shared probability cache first, so workers only read it.
	first := r.writers[0]
	first.probabilities.of(maxEndpoints)
	for len(r.writers) < workers {
		r.writers = append(r.writers, &fragmentWriter{opts: first.opts, detector: first.detector, probabilities: first.probabilities})
	}
	var wg sync.WaitGroup
	chunk := (len(todo) + workers - 1) / workers
	for w := range workers {
		part := todo[min(w*chunk, len(todo)):min((w+1)*chunk, len(todo))]
		writer := r.writers[w]
		wg.Go(func() {
			for _, i := range part {
				next[i] = writer.render(servicePorts[i], large)
			}
		})
	}
	wg.Wait()
}
