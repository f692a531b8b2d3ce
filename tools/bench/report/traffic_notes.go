package report

import (
	"fmt"
	"math"
)

// trafficNotes say, for a measured run, what share of the time per
// connection the Service's path takes and how much of the rate is the
// client's own CPU.
func trafficNotes(r TrafficRun, cpus int) []string {
	var notes []string
	share := r.ServiceShare
	switch {
	case share.N < 2:
		notes = append(notes, fmt.Sprintf("the Service's path: %s of the time per connection (one repetition: no spread)", fmtShare(share.Median)))
	case share.Min <= 0 && share.Max >= 0:
		notes = append(notes, fmt.Sprintf("the Service's path: no difference in rate beyond the spread (cluster IP at %s the pod IP's rate, %s over %d repetitions)",
			fmtRatio(r.RateRatio.Median), fmtRatioRange(r.RateRatio), share.N))
	case share.Max < 0 && r.Mode == ipvsMode:
		notes = append(notes, fmt.Sprintf("the cluster IP ran faster than the pod IP in every repetition (%s, %s over %d): %s",
			fmtRatio(r.RateRatio.Median), fmtRatioRange(r.RateRatio), share.N, ipvsNoBaseline))
	case share.Max < 0:
		notes = append(notes, fmt.Sprintf("the cluster IP ran faster than the pod IP in every repetition (%s, %s over %d): the machine's other load, not the Service's path, set these rates",
			fmtRatio(r.RateRatio.Median), fmtRatioRange(r.RateRatio), share.N))
	default:
		notes = append(notes, fmt.Sprintf("the Service's path: %s of the time per connection (%s–%s over %d repetitions)",
			fmtShare(share.Median), fmtShare(share.Min), fmtShare(share.Max), share.N))
	}
	if sc := r.ServiceCPUPerConnUs; sc.N > 0 {
		spread := "one repetition"
		if sc.N > 1 {
			spread = fmt.Sprintf("%s to %s over %d repetitions", fmtSignedUs(sc.Min), fmtSignedUs(sc.Max), sc.N)
		}
		notes = append(notes, fmt.Sprintf("the Service's path in the client's CPU: %s per connection (%s), the kernel's NAT and conntrack work for its packets in its system calls",
			fmtSignedUs(sc.Median), spread))
	}
	c, p := r.ClusterIP, r.PodIP
	client := fmt.Sprintf("the client's own CPU: %s per connection through the cluster IP (%s of it system), %s to the pod IP (%s system); it kept %.2f of %d CPUs busy",
		fmtUs(c.CPUPerConnUs.Median), fmtUs(c.SystemPerConnUs.Median), fmtUs(p.CPUPerConnUs.Median), fmtUs(p.SystemPerConnUs.Median), c.ClientCores.Median, cpus)
	if limit := float64(min(r.Parallelism, max(cpus, 1))); c.ClientCores.Median >= 0.8*limit {
		client += " — the client is CPU-bound: the rate is its own as much as the path's"
	}
	notes = append(notes, client)
	if cut := c.deadlineExceeded() + p.deadlineExceeded(); cut > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d runs stopped at the run deadline, before all their connections", cut, len(c.Samples)+len(p.Samples)))
	}
	if c.Failed+p.Failed > 0 {
		failed := fmt.Sprintf("failed connections: %d through the cluster IP, %d to the pod IP", c.Failed, p.Failed)
		if r.Mode == ipvsMode && p.Failed > 0 && share.Max >= 0 {
			failed += " — " + ipvsNoBaseline
		}
		notes = append(notes, failed)
	}
	return notes
}

// ipvsMode is the IPVS mode's name in a TrafficRun.
const ipvsMode = "ipvs"

// ipvsNoBaseline says why the pod IP is no baseline in IPVS mode: the
// client's connections to the pod IP reuse the source ports of its
// connections through the cluster IP while IPVS still holds those (TIME_WAIT,
// 2 minutes), and IPVS cannot keep a connection to a virtual server and one
// straight to its real server from the same source port apart, as
// kubernetes#90042 reports: the pod's answers go astray and the client
// retries or fails. Measured in the VM (`svclab vm run -- svclab bench
// traffic --modes ipvs,iptables --connections 2000`): no pod-IP connection
// failed in iptables mode, 425 of 12,000 in IPVS mode, and its pod-IP rate
// fell to 6–16 conn/s against 164–300 through the cluster IP.
const ipvsNoBaseline = "in IPVS mode the pod IP is no baseline: its connections reuse the source ports of the client's IPVS connections, which IPVS still holds, and IPVS does not keep the two apart (kubernetes#90042) — compare the cluster IP's rate with the other modes'"

func fmtShare(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func fmtRatio(f float64) string { return fmt.Sprintf("%.2f×", f) }

func fmtRatioRange(s Spread) string { return fmt.Sprintf("%.2f–%.2f", s.Min, s.Max) }

// fmtUs prints microseconds as fmtMs does milliseconds.
func fmtUs(us float64) string { return fmtMs(us / 1000) }

// deadlineExceeded counts the samples the run deadline cut short.
func (p *TrafficPath) deadlineExceeded() int {
	n := 0
	for _, s := range p.Samples {
		if s.DeadlineExceeded {
			n++
		}
	}
	return n
}

// fmtSignedUs is fmtUs with a sign: +12µs, -3µs; 0µs for what rounds
// to zero (never "-0µs").
func fmtSignedUs(us float64) string {
	switch {
	case math.Abs(us) < 0.5:
		return "0µs"
	case us < 0:
		return "-" + fmtUs(-us)
	}
	return "+" + fmtUs(us)
}
