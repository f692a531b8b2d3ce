package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/labs/netns"
)

// newGetLeftovers lists what interrupted svclab commands left on the host
// (svclab's policy-rc.d of a killed package install: hostprog.HostLeftovers),
// then, per node, the state the other proxy modes left: between iptables
// and ipvs a proxy does not clean the other mode's state when it starts
// (upstream since 1.15); to or from nftables it does, as upstream's
// platformCleanup; `svclab proxy --cleanup` removes all. Without a lab
// (none given, none there) it lists the host's only. -o json|yaml|name|
// jsonpath|custom-columns print Leftover objects (one named host, one per
// node) instead of the text, which -o wide leaves as it is.
func newGetLeftovers() *cobra.Command {
	var labName string
	var all bool
	var out ownOutput
	cmd := &cobra.Command{
		Use:     "leftovers --lab NAME [--all]",
		Aliases: []string{"leftover"},
		Short:   "What an interrupted svclab left on the host (policy-rc.d), and per node what the other proxy modes left behind (KUBE-SVC chains, IPVS virtual servers, kube-ipvs0, ipsets, nftables table kube-proxy)",
		Example: `  sudo svclab get leftovers --lab L                  # what the old mode left (KUBE-SVC chains…)
  sudo svclab get leftovers --lab L --all -o yaml    # the current mode's state too, as Leftover objects`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			var objs []runtime.Object
			w := cmd.OutOrStdout()
			if !out.human() {
				w = io.Discard
			}
			host, err := hostprog.HostLeftovers()
			if err != nil {
				return err
			}
			if len(host) > 0 {
				fmt.Fprintln(w, "host, left by an interrupted svclab:")
				st := leftoverStatus{Scope: "host", Items: []string{}}
				for _, h := range host {
					fmt.Fprintf(w, "  %s: %s\n", h.Path, h.What)
					st.Items = append(st.Items, h.Path+": "+h.What)
				}
				objs = append(objs, newOwnObject("Leftover", "host", time.Time{}, st))
			}
			if len(host) > 0 && labName == "" {
				if names, err := netns.List(); err == nil && len(names) == 0 {
					return out.printUnlessHuman(cmd.OutOrStdout(), objs)
				}
			}
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			for _, n := range l.Topology.Spec.Nodes {
				left, mode, err := l.Leftovers(n.Name)
				if err != nil {
					return err
				}
				what, scope := "left by the other mode", "other-modes"
				if !all {
					left = left.ForeignTo(mode)
				} else {
					what, scope = "made by kube-proxy (all modes)", "all-modes"
				}
				fmt.Fprintf(w, "%s (proxy mode %s), %s:\n", n.Name, mode, what)
				st := leftoverStatus{ProxyMode: mode, Scope: scope, Items: []string{}}
				for _, line := range strings.Split(strings.TrimRight(left.String(), "\n"), "\n") {
					fmt.Fprintf(w, "  %s\n", line)
					if !left.Empty() {
						st.Items = append(st.Items, line)
					}
				}
				objs = append(objs, newOwnObject("Leftover", n.Name, time.Time{}, st))
			}
			return out.printUnlessHuman(cmd.OutOrStdout(), objs)
		},
	}
	addLabFlag(cmd, &labName)
	cmd.Flags().BoolVar(&all, "all", false, "list the current mode's state too")
	out.add(cmd)
	return cmd
}
