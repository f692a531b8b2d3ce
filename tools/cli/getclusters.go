package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/svclab/svclab/labs/kind"
)

// newGetClusters is `svclab get clusters [NAME…]` (or `get cluster`): the
// kind clusters as svclab's table, or Cluster objects for -o
// json|yaml|name|jsonpath|custom-columns.
func newGetClusters() *cobra.Command {
	var out ownOutput
	cmd := &cobra.Command{
		Use:     "clusters [NAME…]",
		Aliases: []string{"cluster"},
		Short:   "List the kind clusters",
		Example: `  sudo svclab get clusters
  sudo svclab get cluster demo -o yaml
  sudo svclab get clusters -o jsonpath='{.items[*].status.kubeconfig}'`,
		ValidArgsFunction: completeClusterNames,
		RunE: func(cmd *cobra.Command, names []string) error {
			if err := out.check(); err != nil {
				return err
			}
			cs, err := kind.List(cmd.Context())
			if err != nil {
				return err
			}
			byName := map[string]kind.Cluster{}
			var all []string
			for _, c := range cs {
				byName[c.Name] = c
				all = append(all, c.Name)
			}
			picked, notFound := pickNames(all, names, "clusters")
			if out.human() {
				if err := printClusterTable(cmd, picked, byName, out); err != nil {
					return err
				}
				return notFound
			}
			if len(picked) > 0 || notFound == nil {
				objs := make([]runtime.Object, 0, len(picked))
				for _, n := range picked {
					objs = append(objs, clusterObject(byName[n]))
				}
				if err := out.print(cmd.OutOrStdout(), objs, len(names) == 1); err != nil {
					return err
				}
			}
			return notFound
		},
	}
	out.add(cmd)
	return cmd
}

// printClusterTable is get clusters' table; -o wide adds the node image,
// the proxy mode and the LoadBalancer pool.
func printClusterTable(cmd *cobra.Command, names []string, byName map[string]kind.Cluster, out ownOutput) error {
	wide := out.output == "wide"
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	if !out.noHeaders {
		fmt.Fprint(w, "NAME\tNODES\tCNI\tPROXY\tKUBECONFIG")
		if wide {
			fmt.Fprint(w, "\tPROXY-MODE\tNODE-IMAGE\tLB-POOL")
		}
		fmt.Fprintln(w)
	}
	for _, n := range names {
		c := byName[n]
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s", c.Name, len(c.Nodes), kind.DescribeCNI(c.CNI), c.Proxy, c.Kubeconfig)
		if wide {
			fmt.Fprintf(w, "\t%s", strings.Join([]string{cellOrNone(c.ProxyMode), cellOrNone(c.NodeImage), cellOrNone(c.LoadBalancerPool)}, "\t"))
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

// cellOrNone is s, or kubectl's <none> for an empty cell.
func cellOrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// clusterObject is the cluster as a svclab.dev/v1alpha1 Cluster.
func clusterObject(c kind.Cluster) runtime.Object {
	return newOwnObject("Cluster", c.Name, time.Time{}, clusterStatus{
		Nodes: c.Nodes, CNI: kind.DescribeCNI(c.CNI), Proxy: c.Proxy, ProxyMode: c.ProxyMode,
		NodeImage: c.NodeImage, Kubeconfig: c.Kubeconfig, LoadBalancerPool: c.LoadBalancerPool,
	})
}
