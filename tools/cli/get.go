package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/svclab/svclab/labs"
)

func newGet() *cobra.Command {
	cmd := &cobra.Command{Use: "get", Short: "List labs and their contents"}
	cmd.AddCommand(&cobra.Command{
		Use:   "labs",
		Short: "List labs (also those only the kernel still knows of)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names, err := labs.List()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tCNI\tNODES\tPODS\tPROXY\tSTATUS")
			for _, n := range names {
				l, err := labs.Open(n)
				if err != nil && labs.Interrupted(n) != "" {
					fmt.Fprintf(w, "%s\t-\t-\t-\t-\t%s\n", n, labs.Interrupted(n))
					continue
				}
				if err != nil {
					fmt.Fprintf(w, "%s\t-\t-\t-\t-\tbroken (no state; svclab delete lab --name %s)\n", n, n)
					continue
				}
				objs, _, err := l.Store.ReadObjects()
				pods := "-"
				if err == nil {
					pods = fmt.Sprint(len(objs.Pods))
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", n, l.Topology.Spec.CNI, len(l.Topology.Spec.Nodes), pods, l.ProxyKernel(), l.Health())
			}
			return w.Flush()
		},
	})
	cmd.AddCommand(newGetPods(), newGetConfigMap(), newGetLeftovers())
	return cmd
}

func newGetPods() *cobra.Command {
	var labName string
	cmd := &cobra.Command{
		Use:   "pods --lab NAME",
		Short: "List a lab's pods (like kubectl get pods -A -o wide), the node proxies included",
		Long: "Lists the node proxies (kube-system/kube-proxy-<node>) and the lab's pods with the state their supervisors " +
			"report, as kubectl shows a kubelet's: READY, STATUS (Running, CrashLoopBackOff, Error, Completed), RESTARTS " +
			"(with how long ago the last one exited) and AGE.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := labs.Open(labName)
			if err != nil {
				return err
			}
			rows, err := l.Pods()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAMESPACE\tNAME\tREADY\tSTATUS\tRESTARTS\tAGE\tIP\tNODE")
			now := time.Now()
			listed := map[string]bool{}
			for _, r := range rows {
				listed[r.Name] = true
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Namespace, r.Name, r.Ready, r.Status,
					restarts(r, now), age(r.Created, now), r.IP, r.Node)
			}
			// Pods a command is making or removing (or was, when it was
			// killed) may exist without being in the store: shown too.
			op, making, removing, err := l.Pending()
			if err != nil {
				return err
			}
			var note []string
			for _, p := range making {
				if !listed[p.Name] {
					fmt.Fprintf(w, "%s\t%s\t0/1\tContainerCreating\t0\t<unknown>\t%s\t%s\n", p.Namespace, p.Name, p.Status.PodIP, p.Spec.NodeName)
					note = append(note, p.Name+" (being created)")
				}
			}
			for _, name := range removing {
				note = append(note, name+" (being deleted)")
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if len(note) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "pending %s: %s: %s\n", op, labs.Interrupted(labName), strings.Join(note, ", "))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&labName, "lab", "", "lab name")
	return cmd
}

// restarts is kubectl's RESTARTS column: the count, and how long ago the
// process last ended ("1 (5s ago)").
func restarts(r labs.PodRow, now time.Time) string {
	if r.Restarts == 0 || r.LastExit.IsZero() {
		return fmt.Sprint(r.Restarts)
	}
	return fmt.Sprintf("%d (%s ago)", r.Restarts, duration.HumanDuration(now.Sub(r.LastExit)))
}

// age is kubectl's AGE column ("<unknown>" when the pod runs no process).
func age(created, now time.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created))
}
