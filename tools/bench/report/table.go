package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints r as a table, one row per Run, then the machine and,
// when the benchmark stopped early, why:
//
//	MODE      SERVICES  PROGRAM  (STORE + PROXY)    EARLY p50/p99  LATE p50/p99   PROXY CPU       NOTES
//	iptables  100       412ms    (35ms + 377ms)     80µs/210µs     85µs/230µs     0.08s+0.02s     …
func WriteTable(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tSERVICES\tPROGRAM\t(STORE + PROXY)\tRULE\tEARLY p50/p99\tLATE p50/p99\tPROXY CPU (self+children)\tNOTES")
	for _, run := range r.Runs {
		fmt.Fprintln(tw, tableRow(run))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nmachine: %d CPUs, kernel %s", r.Machine.CPUs, r.Machine.Kernel)
	if r.Machine.IPTables != "" {
		fmt.Fprintf(w, ", %s", r.Machine.IPTables)
	}
	fmt.Fprintf(w, "; %d fresh connections per target; took %s\n", r.Config.Connections, fmtMs(r.ElapsedMs))
	if r.Stopped != "" {
		fmt.Fprintf(w, "stopped early: %s\n", r.Stopped)
	}
	_, err := fmt.Fprintln(w, "PROGRAM: apply → the last Service's rule in the node's kernel (the proxy's reported sync end, confirmed by the probe; '+≤X': the probe's sighting, late by at most its polling interval X), "+
		"STORE: the lab's apply until the objects are stored, PROXY: from there to the rule; p50/p99: gonum empirical quantiles of the TCP connect times")
	return err
}

func tableRow(run Run) string {
	cells := []string{run.Mode, fmt.Sprint(run.Services)}
	switch {
	case run.Skipped != "":
		cells = append(cells, "-", "-", "-", "-", "-", "-", "skipped: "+run.Skipped)
	case run.Error != "":
		cells = append(cells, "-", "-", "-", "-", "-", "-", "error: "+oneLine(run.Error))
	default:
		p := run.Programming
		rule := "not found"
		if p.RuleFound {
			rule = "found"
		}
		total := fmtMs(p.TotalMs)
		if p.TimedBy != "proxy" {
			total += " +≤" + fmtMs(p.ResolutionMs)
		}
		cells = append(cells, total, "("+fmtMs(p.StoreMs)+" + "+fmtMs(p.ProxyMs)+")", rule,
			fmtLatency(run.Early), fmtLatency(run.Late), fmtCPU(run.CPU), strings.Join(run.Notes, "; "))
	}
	return strings.Join(cells, "\t")
}

func fmtLatency(l *Latency) string {
	if l == nil || l.N == 0 {
		return "-"
	}
	s := fmtMs(l.P50Ms) + "/" + fmtMs(l.P99Ms)
	if l.Failures > 0 {
		s += fmt.Sprintf(" (%d failed)", l.Failures)
	}
	return s
}

func fmtCPU(c *CPU) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%.2fs+%.2fs", c.ProxySeconds, c.ChildrenSeconds)
}

// fmtMs prints a duration in milliseconds with a unit that keeps three
// significant digits: 85µs, 4.12ms, 412ms, 5.50s.
func fmtMs(ms float64) string {
	switch {
	case ms < 1:
		return fmt.Sprintf("%.0fµs", ms*1000)
	case ms < 10:
		return fmt.Sprintf("%.2fms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.0fms", ms)
	default:
		return fmt.Sprintf("%.2fs", ms/1000)
	}
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}
