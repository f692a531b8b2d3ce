package labsize

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteJSON writes the result as indented JSON.
func WriteJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// WriteTable writes one row per size: bring-up (create + pods), time per
// pod, the processes and their PSS, the Service's change and the delete.
func WriteTable(w io.Writer, res *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "NODES\tPODS\tCREATE\tPODS UP\tBRING-UP\tPER POD\tPROCESSES\tPSS\tCHANGE SVC\tDELETE\t")
	for _, s := range res.Sizes {
		if s.Skipped != "" || s.Error != "" && s.BringUpMs == 0 {
			fmt.Fprintf(tw, "%d\t%d\t%s\t\t\t\t\t\t\t\t\n", s.Nodes, s.Pods, note(s))
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%.1fms\t%d\t%s\t%s\t%s\t\n", s.Nodes, s.Pods,
			msText(s.CreateMs), msText(s.PodsMs), msText(s.BringUpMs), s.PerPodMs,
			s.Footprint.Processes, mib(s.Footprint.PSSBytes), msText(s.ChangeServiceMs), msText(s.DeleteMs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range res.Sizes {
		if s.Error != "" {
			fmt.Fprintf(w, "%d nodes: %s\n", s.Nodes, s.Error)
		}
	}
	if res.Stopped != "" {
		fmt.Fprintf(w, "stopped: %s\n", res.Stopped)
	}
	return nil
}

func note(s Size) string {
	if s.Skipped != "" {
		return "skipped"
	}
	return "failed"
}

func msText(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }
