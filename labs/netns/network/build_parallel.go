package network

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// executePlan applies a lab's plan all-or-nothing (on failure the
// namespaces it made are deleted again): the steps up to the overlay in
// order, then every node's overlay steps (3 per peer: 3·n·(n−1) in all)
// side by side, each node's in order. They
// touch only their own node's namespace, made before them; the kernel
// serialises what it must (its RTNL lock), the rest (encoding, the
// round trips, iptables-restore's exec) overlaps.
func executePlan(plan *Plan) error {
	x := newExecutor()
	err := x.run(plan.Steps[:plan.meshFrom])
	if err == nil {
		err = runSections(plan.Steps, plan.meshFrom, plan.meshEnds)
	}
	if err != nil {
		if uerr := x.undo(); uerr != nil {
			return fmt.Errorf("%w (and %v)", err, uerr)
		}
		return err
	}
	x.close()
	return nil
}

// parallelSections bounds how many nodes' overlay steps run at once.
func parallelSections() int { return 2 * runtime.NumCPU() }

// runSections runs steps[from:ends[0]], steps[ends[0]:ends[1]], … each
// on an executor of its own, at most parallelSections at once, and
// returns the first failure (by section order) after all have ended; a
// failure stops sections not yet begun. A StepError says where its step
// is in steps, as execute's do.
func runSections(steps []Step, from int, ends []int) error {
	errs := make([]error, len(ends))
	slots := make(chan struct{}, parallelSections())
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed bool
	)
	start := from
	for i, end := range ends {
		section, offset := steps[start:end], start
		start = end
		slots <- struct{}{}
		mu.Lock()
		stop := failed
		mu.Unlock()
		if stop {
			<-slots
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			x := newExecutor()
			defer x.close()
			if errs[i] = x.run(section); errs[i] != nil {
				var se *StepError
				if errors.As(errs[i], &se) {
					se.Index, se.Total = se.Index+offset, len(steps)
				}
				mu.Lock()
				failed = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
