package report

import (
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"
)

// TrafficResult is one run of `svclab bench traffic`: the machine, what
// was asked, and one TrafficRun per (mode, parallelism), in the order they
// are listed (modes, then parallelism ascending).
type TrafficResult struct {
	Machine Machine       `json:"machine"`
	Config  TrafficConfig `json:"config"`
	Runs    []TrafficRun  `json:"runs"`
	// Stopped says why the benchmark ended before measuring everything
	// (its --timeout, an interrupt); empty when it finished.
	Stopped   string  `json:"stopped,omitempty"`
	ElapsedMs float64 `json:"elapsedMs"`
}

// TrafficConfig is what the traffic benchmark was asked to do.
type TrafficConfig struct {
	Modes []string `json:"modes"`
	// Services is how many ClusterIP Services the lab held (all to the
	// one server); the cluster IP measured is the last one's.
	Services int `json:"services"`
	// Connections is how many new connections one traffic run makes.
	Connections int   `json:"connections"`
	Parallelism []int `json:"parallelism"`
	// Repetitions is how many times each (mode, parallelism, target) runs.
	Repetitions int `json:"repetitions"`
	// RunDeadlineMs bounds one traffic run, TimeoutMs the whole benchmark.
	RunDeadlineMs float64 `json:"runDeadlineMs"`
	TimeoutMs     float64 `json:"timeoutMs"`
}

// TrafficRun is one mode at one parallelism: the same client pod making
// the same number of connections to the Service's cluster IP and straight
// to its one endpoint's pod IP, alternately, Repetitions times.
type TrafficRun struct {
	Mode        string `json:"mode"`
	Parallelism int    `json:"parallelism"`
	// Skipped says why the mode was not measured; Error is a measurement
	// that started and failed. The other fields are then empty or partial.
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
	// ClusterIP is through the Service (the node's proxy rules, NAT and
	// conntrack); PodIP is to the same server pod without any Service
	// rule: the client's, the server's and the kernel's own cost.
	ClusterIP *TrafficPath `json:"clusterIP,omitempty"`
	PodIP     *TrafficPath `json:"podIP,omitempty"`
	// RateRatio is, per repetition, the cluster IP's connections per
	// second over the pod IP's (paired: the two ran one after the other).
	RateRatio Spread `json:"rateRatio"`
	// ServiceShare is the share of the time per connection through the
	// cluster IP that the Service's path adds: 1 − RateRatio, per
	// repetition.
	ServiceShare Spread `json:"serviceShare"`
	// ServiceCPUPerConnUs is, per repetition, the client's CPU per
	// connection through the cluster IP less that to the pod IP: what the
	// Service's path costs in the client's system calls (the kernel's NAT
	// and conntrack work for its packets, where the kernel charges softirq
	// work to the task it interrupted). Less sensitive to other load on
	// the machine than the rates.
	ServiceCPUPerConnUs Spread `json:"serviceCPUPerConnUs"`
	// Notes say what the numbers mean for this row.
	Notes []string `json:"notes,omitempty"`
}

// Measured reports whether r holds numbers for both paths.
func (r TrafficRun) Measured() bool {
	return r.Skipped == "" && r.Error == "" && r.ClusterIP != nil && r.PodIP != nil &&
		len(r.ClusterIP.Samples) > 0 && len(r.PodIP.Samples) > 0
}

// TrafficPath is one target's repetitions and their spread.
type TrafficPath struct {
	Target  string          `json:"target"` // IP:port
	From    string          `json:"from"`   // the client pod
	Samples []TrafficSample `json:"samples"`
	// The spreads of the samples' numbers over the repetitions.
	ConnsPerSecond  Spread `json:"connsPerSecond"`
	ConnectP50Ms    Spread `json:"connectP50Ms"`
	ConnectP99Ms    Spread `json:"connectP99Ms"`
	CPUPerConnUs    Spread `json:"cpuPerConnUs"`
	SystemPerConnUs Spread `json:"systemPerConnUs"`
	// ClientCores is the client's CPU time over the run's wall time: how
	// many CPUs the client kept busy.
	ClientCores Spread `json:"clientCores"`
	// Failed counts the failed connections of all repetitions.
	Failed int `json:"failed"`
	// StartCPUMs is the generator's CPU time for a run of one connection
	// (the least of a few): its start-up, the one connection and its
	// result. Every sample's CPU time is without it.
	StartCPUMs float64 `json:"startCPUMs"`
}

// TrafficSample is one traffic run: N connections from the client pod to
// one target.
type TrafficSample struct {
	Attempted int `json:"attempted"`
	Succeeded int `json:"succeeded"`
	// ElapsedMs is the traffic generator's own time from the first
	// connection to the last one's end (not its start-up).
	ElapsedMs float64 `json:"elapsedMs"`
	// DeadlineExceeded is set when the run's deadline stopped it.
	DeadlineExceeded bool    `json:"deadlineExceeded,omitempty"`
	ConnsPerSecond   float64 `json:"connsPerSecond"`
	// ConnectP50Ms and ConnectP99Ms are the gonum empirical quantiles of
	// the successful connections' connect times (dial to established).
	ConnectP50Ms float64 `json:"connectP50Ms"`
	ConnectP99Ms float64 `json:"connectP99Ms"`
	// CPUSeconds is the traffic process's user+system time (its rusage
	// when it ended) less its start-up's (TrafficPath.StartCPUMs), and
	// SystemSeconds the system part of it: the system calls, and the
	// softirq work its own packets cause where the kernel does it in the
	// sender's system call (a veth delivers there: the path through the
	// node's rules included). The per-connection numbers are those over
	// the attempted connections.
	CPUSeconds      float64 `json:"cpuSeconds"`
	SystemSeconds   float64 `json:"systemSeconds"`
	CPUPerConnUs    float64 `json:"cpuPerConnUs"`
	SystemPerConnUs float64 `json:"systemPerConnUs"`
}

// ProcessCPU is a process's user and system CPU time.
type ProcessCPU struct{ User, System time.Duration }

// Less is c without start, each part at least 0.
func (c ProcessCPU) Less(start ProcessCPU) ProcessCPU {
	return ProcessCPU{User: max(0, c.User-start.User), System: max(0, c.System-start.System)}
}

// Total is user and system time.
func (c ProcessCPU) Total() time.Duration { return c.User + c.System }

// NewTrafficSample summarises one traffic run: connects are the
// successful connections' connect times, attempted counts the failed ones
// too, elapsed is the run's wall time and cpu the process's CPU time
// without its start-up's.
func NewTrafficSample(connects []time.Duration, attempted int, elapsed time.Duration, cpu ProcessCPU, deadlineExceeded bool) TrafficSample {
	cpu = cpu.Less(ProcessCPU{})
	s := TrafficSample{Attempted: attempted, Succeeded: len(connects), ElapsedMs: durationMs(elapsed),
		DeadlineExceeded: deadlineExceeded, CPUSeconds: cpu.Total().Seconds(), SystemSeconds: cpu.System.Seconds()}
	if elapsed > 0 {
		s.ConnsPerSecond = float64(len(connects)) / elapsed.Seconds()
	}
	if attempted > 0 {
		s.CPUPerConnUs = float64(cpu.Total().Microseconds()) / float64(attempted)
		s.SystemPerConnUs = float64(cpu.System.Microseconds()) / float64(attempted)
	}
	if len(connects) > 0 {
		l := Summarize(connects, 0)
		s.ConnectP50Ms, s.ConnectP99Ms = l.P50Ms, l.P99Ms
	}
	return s
}

// ClientCores is the sample's CPU time over its wall time.
func (s TrafficSample) ClientCores() float64 {
	if s.ElapsedMs <= 0 {
		return 0
	}
	return s.CPUSeconds / (s.ElapsedMs / 1000)
}

// Summarize fills the path's spreads and failure count from its samples.
func (p *TrafficPath) Summarize() {
	pick := func(f func(TrafficSample) float64) Spread {
		var v []float64
		for _, s := range p.Samples {
			v = append(v, f(s))
		}
		return SpreadOf(v)
	}
	p.ConnsPerSecond = pick(func(s TrafficSample) float64 { return s.ConnsPerSecond })
	p.ConnectP50Ms = pick(func(s TrafficSample) float64 { return s.ConnectP50Ms })
	p.ConnectP99Ms = pick(func(s TrafficSample) float64 { return s.ConnectP99Ms })
	p.CPUPerConnUs = pick(func(s TrafficSample) float64 { return s.CPUPerConnUs })
	p.SystemPerConnUs = pick(func(s TrafficSample) float64 { return s.SystemPerConnUs })
	p.ClientCores = pick(TrafficSample.ClientCores)
	p.Failed = 0
	for _, s := range p.Samples {
		p.Failed += s.Attempted - s.Succeeded
	}
}

// Compare fills the run's paired ratios from its two paths' samples
// (repetition i of one with repetition i of the other) and its notes.
func (r *TrafficRun) Compare(cpus int) {
	if r.ClusterIP == nil || r.PodIP == nil {
		return
	}
	var ratios, shares, cpu []float64
	for i := range min(len(r.ClusterIP.Samples), len(r.PodIP.Samples)) {
		c, p := r.ClusterIP.Samples[i], r.PodIP.Samples[i]
		cpu = append(cpu, c.CPUPerConnUs-p.CPUPerConnUs)
		if p.ConnsPerSecond <= 0 {
			continue
		}
		ratio := c.ConnsPerSecond / p.ConnsPerSecond
		ratios = append(ratios, ratio)
		shares = append(shares, 1-ratio)
	}
	r.ServiceCPUPerConnUs = SpreadOf(cpu)
	r.RateRatio, r.ServiceShare = SpreadOf(ratios), SpreadOf(shares)
	if r.Measured() {
		r.Notes = trafficNotes(*r, cpus)
	}
}

// Spread is the minimum, median and maximum of a number over repetitions;
// N is how many there were (0: none, the other fields are then 0).
type Spread struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// SpreadOf is the spread of v (not modified); the median of an even
// number of values is the mean of the middle two.
func SpreadOf(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := slices.Sorted(slices.Values(v))
	median := s[len(s)/2]
	if len(s)%2 == 0 {
		median = stat.Mean(s[len(s)/2-1:len(s)/2+1], nil)
	}
	return Spread{N: len(s), Min: s[0], Median: median, Max: s[len(s)-1]}
}

func durationMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
