package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/workload"
)

// ApplyOptions say what `svclab bench apply` measures.
type ApplyOptions struct {
	Services []int  // numbers of generated Services in the lab
	Modes    []Mode // in the order to measure them
	Applies  int    // applies of one changed EndpointSlice per lab
	Timeout  time.Duration
	Lab      netns.Options
}

// DefaultApplies is how many changed EndpointSlices each lab gets.
const DefaultApplies = 21

// ApplyRun is one lab's measurement: the medians of its applies, split
// into the lab's steps (netns.ChangeTimes) and the proxies' part.
type ApplyRun struct {
	Mode     string `json:"mode"`
	Services int    `json:"services"`
	Applies  int    `json:"applies"`
	// TotalMs is the apply, from the call to its return (rules in the
	// kernel, every proxy acknowledged).
	TotalMs float64 `json:"totalMs"`
	// StoreMs is the lab's part before the proxies: lock, read, controllers,
	// journal, object files.
	StoreMs float64 `json:"storeMs"`
	// ProxyMs is from the stored change to the proxy's status written after
	// its sync (inotify, read, sync, status).
	ProxyMs float64 `json:"proxyMs"`
	// AckMs is from the proxy's status to the apply seeing it.
	AckMs float64 `json:"ackMs"`
	// FinishMs is the rest: the report and the journal cleared.
	FinishMs float64 `json:"finishMs"`
	// Steps are the medians of the lab's steps, by name.
	Steps   map[string]float64 `json:"stepsMs"`
	Error   string             `json:"error,omitempty"`
	Skipped string             `json:"skipped,omitempty"`
}

// RunApply measures, for every mode and number of Services, the apply of
// one changed EndpointSlice in a one-node lab of its own.
func RunApply(ctx context.Context, o ApplyOptions) ([]ApplyRun, error) {
	if o.Applies < 1 {
		return nil, errors.New("bench apply: --applies must be at least 1")
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	var runs []ApplyRun
	for _, n := range o.Services {
		for _, m := range o.Modes {
			if ctx.Err() != nil {
				return runs, nil
			}
			fmt.Fprintf(o.Lab.Out, "bench apply: %s, %d Services\n", m.Name, n)
			runs = append(runs, measureApply(ctx, o, m, n))
		}
	}
	return runs, nil
}

// measureApply builds one lab, fills it with n Services, and times the applies.
func measureApply(ctx context.Context, o ApplyOptions, m Mode, n int) ApplyRun {
	run := ApplyRun{Mode: m.Name, Services: n}
	skipped, err := onLabOfItsOwn(ctx, m, o.Lab, func(lab *netns.Lab, dir string) error {
		return applyOn(ctx, lab, dir, o, m, n, &run)
	})
	run.Skipped = skipped
	if err != nil {
		run.Error = err.Error()
	}
	return run
}

// applyOn fills the lab and times o.Applies applies of the changed slice.
func applyOn(ctx context.Context, lab *netns.Lab, dir string, o ApplyOptions, m Mode, n int, run *ApplyRun) error {
	opts := labOptions(ctx, o.Lab)
	if _, err := startPods(ctx, lab, dir, m, opts); err != nil {
		return err
	}
	services, err := decodeServices(n)
	if err != nil {
		return err
	}
	changed, err := workload.Decode([]byte(changedServiceYAML()+"---\n"+changedSliceYAML(0)), "the changed Service")
	if err != nil {
		return err
	}
	services.Append(changed)
	if err := lab.ApplyManifests(ctx, services, "generated Services", opts); err != nil {
		return err
	}
	var samples []applySample
	for i := 1; i <= o.Applies; i++ {
		s, err := timeApply(ctx, lab, i, opts)
		if err != nil {
			return err
		}
		samples = append(samples, s)
	}
	*run = summarize(*run, samples)
	return nil
}

// applySample is one apply's times.
type applySample struct {
	total, proxy, ack time.Duration
	steps             netns.ChangeTimes
}

// timeApply applies version i of the changed slice and times it.
func timeApply(ctx context.Context, lab *netns.Lab, i int, opts netns.Options) (applySample, error) {
	m, err := workload.Decode([]byte(changedSliceYAML(i)), "the changed EndpointSlice")
	if err != nil {
		return applySample{}, err
	}
	var times netns.ChangeTimes
	opts.Times = &times
	start := time.Now()
	if err := lab.ApplyManifests(ctx, m, "the changed EndpointSlice", opts); err != nil {
		return applySample{}, err
	}
	total := time.Since(start)
	acked := times.Stored.Add(times.Proxies)
	statuses, err := lab.Store.ProxyStatuses()
	if err != nil {
		return applySample{}, err
	}
	// The proxy may see the new generation, sync and report before this
	// process takes the time after the store write: its part is then 0.
	st, ok := statuses[nodeName]
	if !ok || st.LastSync.Before(times.Stored.Add(-times.Store)) || st.LastSync.After(acked) {
		return applySample{}, fmt.Errorf("bench apply: %s's proxy status (%v) is not from this apply", nodeName, st.LastSync)
	}
	synced := maxTime(st.LastSync, times.Stored)
	return applySample{total: total, proxy: synced.Sub(times.Stored), ack: acked.Sub(synced), steps: times}, nil
}

// summarize fills run with the medians of the samples.
func summarize(run ApplyRun, samples []applySample) ApplyRun {
	med := func(f func(applySample) time.Duration) float64 {
		var ds []time.Duration
		for _, s := range samples {
			ds = append(ds, f(s))
		}
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	run.Applies = len(samples)
	run.TotalMs = med(func(s applySample) time.Duration { return s.total })
	run.StoreMs = med(func(s applySample) time.Duration {
		t := s.steps
		return t.Lock + t.Read + t.Change + t.Journal + t.Store
	})
	run.ProxyMs = med(func(s applySample) time.Duration { return s.proxy })
	run.AckMs = med(func(s applySample) time.Duration { return s.ack })
	run.FinishMs = med(func(s applySample) time.Duration { return s.steps.Finish })
	run.Steps = map[string]float64{
		"lock":    med(func(s applySample) time.Duration { return s.steps.Lock }),
		"read":    med(func(s applySample) time.Duration { return s.steps.Read }),
		"change":  med(func(s applySample) time.Duration { return s.steps.Change }),
		"journal": med(func(s applySample) time.Duration { return s.steps.Journal }),
		"store":   med(func(s applySample) time.Duration { return s.steps.Store }),
		"proxies": med(func(s applySample) time.Duration { return s.steps.Proxies }),
	}
	return run
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
