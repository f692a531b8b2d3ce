package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/svclab/svclab/labs/netns"
)

// newDeletePod is `kubectl delete pod` for a lab: pods by name or by label
// selector. In kube-system the pods are the node proxies (label
// k8s-app=kube-proxy): deleting them restarts the proxies with the current
// kube-system/kube-proxy ConfigMap, as the DaemonSet would recreate them;
// the coredns pod there is deleted like any Deployment's pod (a new one,
// with a new name and IP, replaces it).
func newDeletePod() *cobra.Command {
	var labName, namespace, selector string
	var del deleteFlags
	cmd := &cobra.Command{
		Use:   "pod [NAME…] --lab NAME [-n NAMESPACE] [-l SELECTOR]",
		Short: "Delete pods; -n kube-system -l k8s-app=kube-proxy restarts the node proxies",
		Example: `  sudo svclab delete pod web-xxxxx           # terminates for its grace period, like kubectl
  sudo svclab delete pod -n kube-system -l k8s-app=kube-proxy   # the node proxies restart and read their ConfigMap
  sudo svclab delete pod web-xxxxx --grace-period 0 --wait=false`,
		RunE: labChange(func(cmd *cobra.Command, names []string) error {
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			if len(names) == 0 && selector == "" {
				return fmt.Errorf("give pod names or -l SELECTOR")
			}
			sel, err := labels.Parse(selector)
			if err != nil {
				return fmt.Errorf("-l %q: %w", selector, err)
			}
			want := map[string]bool{}
			for _, n := range names {
				want[n] = true
			}
			opts := netns.Options{Out: cmd.OutOrStdout()}
			var nodes []string // kube-system's proxy pods: restarted per node
			if namespace == "kube-system" {
				for _, p := range l.ProxyPods() {
					if want[p.Name] || (selector != "" && sel.Matches(labels.Set(p.Labels))) {
						nodes = append(nodes, p.Node)
						delete(want, p.Name)
					}
				}
			}
			objs, _, err := l.Store.ReadObjects()
			if err != nil {
				return err
			}
			var victims []string // pods of the store (in kube-system: the coredns pod)
			for _, p := range objs.Pods {
				if p.Namespace == namespace && (want[p.Name] || (selector != "" && sel.Matches(labels.Set(p.Labels)))) {
					victims = append(victims, p.Name)
					delete(want, p.Name)
				}
			}
			if len(want) > 0 {
				return fmt.Errorf("pods %v: not found in namespace %s", keys(want), namespace)
			}
			if len(victims) == 0 && len(nodes) == 0 {
				return fmt.Errorf("no pod in namespace %s matches %q", namespace, selector)
			}
			if len(nodes) > 0 {
				if err := l.RestartProxies(cmd.Context(), nodes, opts); err != nil || len(victims) == 0 {
					return err
				}
			}
			return l.DeletePods(cmd.Context(), victims, opts, del.options())
		}),
	}
	addLabFlag(cmd, &labName)
	addNamespaceFlag(cmd, &namespace)
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector")
	del.addFlags(cmd)
	return cmd
}

// deleteFlags are kubectl delete's flags for how pods go.
type deleteFlags struct {
	gracePeriod    int64
	wait           bool
	ignoreNotFound bool
}

func (d *deleteFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().Int64Var(&d.gracePeriod, "grace-period", -1, "seconds a pod has to stop after SIGTERM; negative: the pod's terminationGracePeriodSeconds (default 30); 0 counts as 1")
	cmd.Flags().BoolVar(&d.wait, "wait", true, "wait until the deleted pods are gone (their endpoints are terminating meanwhile)")
}

func (d deleteFlags) options() netns.DeleteOptions {
	return netns.DeleteOptions{GracePeriod: d.gracePeriod, NoWait: !d.wait, IgnoreNotFound: d.ignoreNotFound}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
