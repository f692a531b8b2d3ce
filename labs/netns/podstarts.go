package netns

import (
	"context"
	"runtime"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// parallelPodStarts is how many pods start at once: a pod's start is
// mostly waiting (the kernel's RTNL lock for its links, its server's
// exec and start-up), so a few per core keep the cores busy; more only
// queue on the same lock and take memory all at once.
func parallelPodStarts() int { return 4 * runtime.NumCPU() }

// startPods starts pods, at most parallelPodStarts at once, as the
// kubelets of many nodes start theirs side by side, and calls started
// for each as it comes up (one call at a time). The first failure stops
// the starts still under way and begins no more; startPods returns it
// once every start it began has ended. The caller undoes them all (the
// journal names every one, started or not).
func (l *Lab) startPods(ctx context.Context, pods []*corev1.Pod, opts Options, started func(*corev1.Pod)) error {
	hosts, err := l.hosts()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	slots := make(chan struct{}, parallelPodStarts())
	var (
		wg     sync.WaitGroup
		report sync.Mutex
	)
	for _, pod := range pods {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := l.startPod(ctx, hosts, pod, opts); err != nil {
				cancel(err) // the first cause stays: the later ones are this cancel's
				return
			}
			crashPoint("update:pod-started")
			report.Lock()
			started(pod)
			report.Unlock()
			holdPoint(ctx, "update:pod-reported")
		}()
	}
	wg.Wait()
	if ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}
