package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/svclab/svclab/internal/kubeconfig"
	"github.com/svclab/svclab/scenarios/conformance/cmdline"
	"github.com/svclab/svclab/scenarios/kit/kube/access"
)

// newConformanceCleanup is `svclab conformance cleanup`: what runs of the
// suite left on a cluster, removed — the sweep every run starts with
// (kube.Cleanup, run by the suite's binary with -cleanup), waiting until it is gone.
func newConformanceCleanup() *cobra.Command {
	var (
		kubeconfigFlag, kubeContext, netns, proxyConfig string
		inCluster                                       bool
		readyTimeout                                    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "cleanup [--kubeconfig FILE] [--proxy-config NS/NAME]",
		Short: "Remove what killed runs of the conformance suite left on a cluster, and put back a proxy ConfigMap one left changed",
		Long: "Deletes the namespaces (and so the node agents) of every run of `svclab conformance` that no longer runs — " +
			"objects labelled app.kubernetes.io/managed-by=svclab-conformance — and puts back the proxy's ConfigMap that a " +
			"killed --disruptive run left changed (the run saved it first, in " + access.SavedProxyConfigName + " beside it): " +
			"the data written back, the proxy's pods restarted and ready, the saved copy deleted. A run still running " +
			"(its heartbeat Lease renewed) is left alone; a run killed in the last 30 seconds is told from one that runs by " +
			"watching its heartbeat for up to 30 seconds. Every run of the suite does the same before it starts.",
		Example: "  svclab conformance cleanup --kubeconfig ~/.kube/config\n" +
			"  svclab conformance cleanup --proxy-config kube-system/kube-proxy-config",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, source, done, err := clusterConfig(kubeconfigFlag, kubeContext, netns, inCluster)
			if err != nil {
				return err
			}
			defer done()
			if err := kubeconfig.Reach(cmd.Context(), cfg, source); err != nil {
				return err
			}
			// The suite's binary does it (-cleanup): it links the cluster
			// libraries the sweep uses, which svclab does not.
			f := cmdline.Flags{Context: kubeContext, Netns: netns, InCluster: inCluster, ProxyConfig: proxyConfig, ReadyTimeout: readyTimeout, Cleanup: true}
			if !inCluster {
				f.Kubeconfig = source
			}
			bin, err := cmdline.Find()
			if err != nil {
				return err
			}
			code, err := runSuite(cmd, bin, f.Args())
			if err != nil {
				return err
			}
			if code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&kubeconfigFlag, "kubeconfig", "", "kubeconfig of the cluster (default: as kubectl finds it, $KUBECONFIG, else ~/.kube/config)")
	fl.StringVar(&kubeContext, "context", "", "kubeconfig context (default: its current context)")
	fl.StringVar(&netns, "netns", "", "reach the API server from this network namespace (svclab-docker for clusters on svclab's dockerd)")
	fl.BoolVar(&inCluster, "in-cluster", false, "the cluster this runs in (a pod), with its service account")
	fl.StringVar(&proxyConfig, "proxy-config", "", "NAMESPACE/NAME of the proxy's ConfigMap, as given to the runs (default "+access.DefaultProxyConfig+")")
	fl.DurationVar(&readyTimeout, "ready-timeout", cmdline.DefaultReadyTimeout, "bound of every wait (namespaces gone, the proxy's pods ready again)")
	return cmd
}

// clusterConfig is the rest.Config of the cluster the flags name: the
// in-cluster config, or the kubeconfig as kubectl finds it; where it came
// from; and what to call when done (a merged kubeconfig is a temporary
// file).
func clusterConfig(kubeconfigFlag, kubeContext, netns string, inCluster bool) (*rest.Config, string, func(), error) {
	if inCluster {
		if kubeconfigFlag != "" {
			return nil, "", func() {}, errors.New("--in-cluster and --kubeconfig exclude each other: the cluster is the one this runs in")
		}
		cfg, err := kubeconfig.InCluster()
		return cfg, kubeconfig.InClusterSource, func() {}, err
	}
	file, _, cleanup, err := kubeconfig.Resolve(kubeconfigFlag)
	if err != nil {
		return nil, "", cleanup, err
	}
	cfg, err := kubeconfig.Load(file, kubeContext, netns)
	if err != nil {
		cleanup()
		return nil, "", func() {}, err
	}
	return cfg, file, cleanup, nil
}
