package cli

import (
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/labs/netns"
)

// Shell completion: cobra's `svclab completion bash|zsh|fish|powershell`
// scripts call `svclab __complete …`, which ends in these functions for
// the names only a lab knows: labs (--lab), hosts (exec) and objects
// (get, describe, -n). They read the lab's store and never fail loudly:
// no lab, no completions.

// completeObjectNames completes the names of r's objects in the lab of
// cmd's --lab (or the only lab), in its -n namespace unless -A.
func completeObjectNames(cmd *cobra.Command, r resource, toComplete string) ([]string, cobra.ShellCompDirective) {
	l, err := openLab(flagValue(cmd, "lab"))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	v, err := newLabView(l)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	objs, err := r.listed(v)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ns := flagValue(cmd, "namespace")
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	all := flagValue(cmd, "all-namespaces") == "true"
	var names []string
	for _, o := range objs {
		m := o.(metav1.Object)
		if r.namespaced && !all && m.GetNamespace() != ns {
			continue
		}
		if strings.HasPrefix(m.GetName(), toComplete) {
			names = append(names, m.GetName())
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeHosts completes the hosts of a lab `exec` runs in: nodes,
// clients, the router and the pods.
func completeHosts(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	l, err := openLab(flagValue(cmd, "lab"))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var hosts []string
	for _, h := range l.Topology.Hosts() {
		hosts = append(hosts, h.Name)
	}
	hosts = append(hosts, "router")
	if objs, _, err := l.Store.ReadObjects(); err == nil {
		for _, p := range objs.Pods {
			hosts = append(hosts, p.Name)
		}
	}
	return prefixed(hosts, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeLabNames completes positional lab names (delete lab --name).
func completeLabNames(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	names, err := netns.List()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

func prefixed(list []string, prefix string) []string {
	var out []string
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// flagValue is the value of cmd's flag name ("" if it has none).
func flagValue(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}
