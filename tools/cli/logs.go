package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/netns"
)

// newLogs is `kubectl logs` for a lab: a node proxy is the pod
// kube-system/kube-proxy-<node> (as kube-proxy's DaemonSet pods are), a
// pod's server is its pod.
func newLogs() *cobra.Command {
	var labName, namespace, container string
	var follow bool
	var tail int
	cmd := &cobra.Command{
		Use:   "logs [--lab NAME] [-n NAMESPACE] [pod/]POD [-c CONTAINER] [-f] [--tail N]",
		Short: "Print a pod's log: a pod's server, or a node's proxy as -n kube-system kube-proxy-<node>",
		Example: "  sudo svclab logs -n kube-system kube-proxy-node1 -f --tail 20\n" +
			"  sudo svclab logs pod/nginx-0",
		Long: "Prints the log of a lab pod's process, as kubectl logs does: a pod's server (the agnhost-netexec " +
			"compatible server), or a node's proxy, which is the pod kube-proxy-<node> in kube-system " +
			"(svclab logs -n kube-system kube-proxy-node1). The supervisor's lines about starts, exits and " +
			"back-offs are in it too. -f follows the log until ^C; --tail N prints only the last N lines.",
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			r, _ := resourceNamed("pods")
			return completeObjectNames(cmd, r, toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if kind, pod, ok := strings.Cut(name, "/"); ok {
				if r, known := resourceNamed(kind); !known || r.plural != "pods" {
					return fmt.Errorf("%s: svclab logs takes a pod (NAME or pod/NAME)", name)
				}
				name = pod
			}
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			path, err := l.PodLog(namespace, name)
			if err != nil {
				return err
			}
			if container != "" {
				if err := checkContainer(l, namespace, name, container); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = process.WriteLog(ctx, path, cmd.OutOrStdout(), tail, follow)
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("pod %s/%s has no log yet (%s)", namespace, name, path)
			}
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	addLabFlag(cmd, &labName)
	addNamespaceFlag(cmd, &namespace)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing what the process writes, until ^C")
	cmd.Flags().IntVar(&tail, "tail", -1, "print only the last N lines (-1: all)")
	cmd.Flags().StringVarP(&container, "container", "c", "", "the container (a lab pod's one process serves all its containers: any of them prints the same log)")
	return cmd
}

// checkContainer refuses a container the pod does not have, as kubectl
// does; a node proxy's container is kube-proxy.
func checkContainer(l *netns.Lab, namespace, pod, container string) error {
	pods, err := l.PodObjects(nil)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if p.Namespace != namespace || p.Name != pod {
			continue
		}
		for _, c := range p.Spec.Containers {
			if c.Name == container {
				return nil
			}
		}
	}
	return fmt.Errorf("container %s is not valid for pod %s", container, pod)
}
