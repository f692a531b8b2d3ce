package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTrafficJSON prints r as indented JSON (the fields of TrafficResult,
// every repetition's sample included).
func WriteTrafficJSON(w io.Writer, r *TrafficResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTrafficTable prints r as a table, one row per (mode, parallelism),
// each number the median over the repetitions with the range beside it;
// then each row's notes, the machine, and what the columns mean:
//
//	MODE      PAR  CLUSTER IP conn/s   POD IP conn/s       RATIO             …
//	iptables  1    2410 (2380–2450)    2600 (2550–2700)    0.93 (0.91–0.95)  …
func WriteTrafficTable(w io.Writer, r *TrafficResult) error {
	var rows bytes.Buffer
	tw := tabwriter.NewWriter(&rows, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tPAR\tCLUSTER IP conn/s\tPOD IP conn/s\tRATIO\tSERVICE SHARE\tSERVICE CPU/conn\tCONNECT p50/p99 (cluster IP)\t(pod IP)\tCLIENT CPU/conn (cluster IP)\t(pod IP)\tCLIENT CPUs\tNOTE")
	for _, run := range r.Runs {
		fmt.Fprintln(tw, trafficRow(run))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(rows.String(), "\n"), "\n") {
		b.WriteString(strings.TrimRight(line, " ") + "\n") // a measured row's empty NOTE cell
	}
	for _, run := range r.Runs {
		for _, n := range run.Notes {
			fmt.Fprintf(&b, "%s, parallelism %d: %s\n", run.Mode, run.Parallelism, n)
		}
	}
	fmt.Fprintf(&b, "\nmachine: %d CPUs, kernel %s", r.Machine.CPUs, r.Machine.Kernel)
	if r.Machine.IPTables != "" {
		fmt.Fprintf(&b, ", %s", r.Machine.IPTables)
	}
	fmt.Fprintf(&b, "; the last of %d Service%s; %d connections per run, %d repetitions, each run bounded by %s; took %s\n",
		r.Config.Services, plural(r.Config.Services), r.Config.Connections, r.Config.Repetitions, fmtMs(r.Config.RunDeadlineMs), fmtMs(r.ElapsedMs))
	if r.Stopped != "" {
		fmt.Fprintf(&b, "stopped early: %s\n", r.Stopped)
	}
	b.WriteString("Each number: the median over the repetitions (min–max). conn/s: new connections per second, each an HTTP GET answered by the one server pod; " +
		"RATIO: cluster IP conn/s over pod IP conn/s, paired per repetition; SERVICE SHARE: 1 − RATIO, the share of the time per connection the Service's path adds; SERVICE CPU/conn: the client's CPU per connection through the cluster IP less to the pod IP, paired per repetition (the kernel's work for the Service in the client's system calls: steadier than the rates on a busy machine); " +
		"CONNECT: dial to established, gonum empirical quantiles; CLIENT CPU/conn: the traffic process's user+system time, less its start-up's (a one-connection run's), over its connections; CLIENT CPUs: that time over the run's wall time\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func trafficRow(run TrafficRun) string {
	cells := []string{run.Mode, fmt.Sprint(run.Parallelism)}
	const columns = 10 // the measured columns
	switch {
	case run.Skipped != "":
		cells = append(append(cells, dashes(columns)...), "skipped: "+run.Skipped)
	case run.Error != "":
		cells = append(append(cells, dashes(columns)...), "error: "+oneLine(run.Error))
	default:
		c, p := path(run.ClusterIP), path(run.PodIP)
		cells = append(cells,
			fmtRate(c.ConnsPerSecond), fmtRate(p.ConnsPerSecond),
			fmtSpread(run.RateRatio, func(f float64) string { return fmt.Sprintf("%.2f", f) }),
			fmtSpread(run.ServiceShare, fmtShare),
			fmtSpread(run.ServiceCPUPerConnUs, fmtSignedUs),
			fmtConnect(c), fmtConnect(p),
			fmtSpread(c.CPUPerConnUs, fmtUs), fmtSpread(p.CPUPerConnUs, fmtUs),
			fmtSpread(c.ClientCores, func(f float64) string { return fmt.Sprintf("%.2f", f) }),
			"") // the notes follow the table
	}
	return strings.Join(cells, "\t")
}

// path is p, or an empty path for a run cut short before it was measured.
func path(p *TrafficPath) TrafficPath {
	if p == nil {
		return TrafficPath{}
	}
	return *p
}

func dashes(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "-"
	}
	return out
}

// fmtSpread is "median (min–max)", "median" for one value, "-" for none.
func fmtSpread(s Spread, f func(float64) string) string {
	switch s.N {
	case 0:
		return "-"
	case 1:
		return f(s.Median)
	}
	return f(s.Median) + " (" + f(s.Min) + "–" + f(s.Max) + ")"
}

func fmtRate(s Spread) string {
	return fmtSpread(s, func(f float64) string { return fmt.Sprintf("%.0f", f) })
}

// fmtConnect is the medians of p50 and p99, and how many failed.
func fmtConnect(p TrafficPath) string {
	if p.ConnectP50Ms.N == 0 {
		return "-"
	}
	s := fmtMs(p.ConnectP50Ms.Median) + "/" + fmtMs(p.ConnectP99Ms.Median)
	if p.Failed > 0 {
		s += fmt.Sprintf(" (%d failed)", p.Failed)
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
