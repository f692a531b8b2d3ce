package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
		Short: "List a lab's pods (like kubectl get pods -o wide), the node proxies included",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := labs.Open(labName)
			if err != nil {
				return err
			}
			objs, _, err := l.Store.ReadObjects()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAMESPACE\tNAME\tIP\tNODE")
			for _, n := range l.Topology.Spec.Nodes {
				fmt.Fprintf(w, "kube-system\tkube-proxy-%s\t%s\t%s\n", n.Name, n.IP.Addr(), n.Name)
			}
			for _, p := range objs.Pods {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.Namespace, p.Name, p.Status.PodIP, p.Spec.NodeName)
			}
			// Pods a command is making or removing (or was, when it was
			// killed) may exist without being in the store: shown too.
			op, making, removing, err := l.Pending()
			if err != nil {
				return err
			}
			var note []string
			for _, p := range making {
				if objs.Pod(p.Name) == nil {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.Namespace, p.Name, p.Status.PodIP, p.Spec.NodeName)
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
