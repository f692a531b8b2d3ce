package upstream

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// WriteSyncBenchJSON writes res as indented JSON.
func WriteSyncBenchJSON(w io.Writer, res *SyncBenchResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// WriteSyncBenchTable writes res as a Markdown table: per step, each
// side's event → kernel p50 and p95, svclab/upstream of the p50s, each
// side's event → sync returned p50 (the rest is the check's own command,
// seconds for nft on a large table), and the programs each side ran per
// sync; then each process's memory.
func WriteSyncBenchTable(w io.Writer, res *SyncBenchResult) error {
	var b strings.Builder
	mode := res.Mode
	if res.IPTables != "" {
		mode += " (iptables-" + res.IPTables + ")"
	}
	fmt.Fprintf(&b, "%s mode, %d Services × %d endpoints: svclab vs upstream kube-proxy %s, each in a network namespace of its own, interleaved; %d changes of each kind\n\n",
		mode, res.Services, res.Endpoints, res.Upstream, res.Changes)
	if res.VM != "" {
		fmt.Fprintf(&b, "%s\n\n", vmCaveat(res.VM))
	}
	b.WriteString("| step | upstream p50 | upstream p95 | svclab p50 | svclab p95 | svclab/upstream p50 | sync returned p50: upstream | svclab | upstream execs per sync | svclab execs per sync |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, st := range res.Steps {
		u, s := st.Sides[SideUpstream], st.Sides[SideSvclab]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", st.Step,
			fmtMS(u.VisibleP50MS), fmtMS(u.VisibleP95MS), fmtMS(s.VisibleP50MS), fmtMS(s.VisibleP95MS),
			ratio(s.VisibleP50MS, u.VisibleP50MS), fmtMS(u.SyncP50MS), fmtMS(s.SyncP50MS),
			fmtExecs(u.ExecsPerSync), fmtExecs(s.ExecsPerSync))
	}
	u, s := res.Memory[SideUpstream], res.Memory[SideSvclab]
	if u != nil && s != nil {
		fmt.Fprintf(&b, "| RSS after the run (peak) | %s (%s) | | %s (%s) | | %s | | | | |\n",
			mib(u.RSSBytes), mib(u.PeakRSSBytes), mib(s.RSSBytes), mib(s.PeakRSSBytes), ratio(float64(s.RSSBytes), float64(u.RSSBytes)))
		fmt.Fprintf(&b, "| Go heap in use after GC | %s | | %s | | %s | | | | |\n",
			mib(u.HeapBytes), mib(s.HeapBytes), ratio(float64(s.HeapBytes), float64(u.HeapBytes)))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// vmCaveat says where a run in the VM ran and what its times are worth.
func vmCaveat(desc string) string {
	if strings.Contains(desc, "accelerator tcg") {
		return "Emulated: both sides ran in svclab's VM (" + desc + "), every instruction emulated by TCG: " +
			"compare the ratios only, the absolute times are not representative of a real node."
	}
	return "Both sides ran in svclab's VM (" + desc + "): compare the ratios; the absolute times are the VM's."
}

func fmtMS(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// fmtExecs is "iptables-restore 1, iptables 0.1" (programs by name).
func fmtExecs(m map[string]float64) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, prog := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %s", prog, strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", m[prog]), "0"), ".")))
	}
	return strings.Join(parts, ", ")
}
