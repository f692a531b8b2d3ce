package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/svclab/svclab/internal/netnsdial"
	"github.com/svclab/svclab/scenarios/conformance"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/kube"
)

// newConformance is `svclab conformance`: the scenarios against any
// cluster, as a CI conformance suite with a JUnit report.
func newConformance() *cobra.Command {
	var (
		kubeconfig, kubeContext, netns, junit, focus, labels string
		opts                                                 kube.Options
		timeout                                              time.Duration
		verbose                                              bool
	)
	cmd := &cobra.Command{
		Use:   "conformance --kubeconfig FILE [--junit FILE]",
		Short: "Run the scenarios against a Kubernetes cluster (kind or not) and write a JUnit XML report",
		Long: "Runs svclab's conformance scenarios — two-pod split, three-pod ladder, cross-node NodePort with SNAT, " +
			"proxy-mode switch through the kube-proxy ConfigMap — against the cluster of a kubeconfig. " +
			"Each scenario works in a namespace of its own; a node agent (a privileged hostNetwork DaemonSet of " +
			"svclab's image) reads conntrack, iptables-save and nft on the nodes. Everything is deleted at the end. " +
			"The image must be pullable by the nodes, or loaded (clusters from `svclab create cluster` have it).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kubeconfig == "" {
				return fmt.Errorf("--kubeconfig is required")
			}
			rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
			cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
				&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
			if err != nil {
				return fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
			}
			cfg = netnsdial.Config(cfg, netns)
			opts.Source, opts.Out = kubeconfig, cmd.OutOrStdout()
			// Reach the cluster before the suite starts: an unreachable
			// cluster is one clear error, not a failed suite.
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			target, err := kube.New(ctx, cfg, opts)
			if err != nil {
				return err
			}
			conformance.Setup = func(context.Context) (kit.Target, error) { return target, nil }
			conformance.Image, conformance.PullPolicy = opts.Image, opts.PullPolicy

			suite, reporter := ginkgo.GinkgoConfiguration()
			suite.Timeout = timeout
			suite.FocusStrings = nonEmpty(focus)
			suite.LabelFilter = labels
			reporter.JUnitReport = junit
			reporter.Verbose = verbose
			reporter.NoColor = true
			gomega.RegisterFailHandler(ginkgo.Fail)
			t := &suiteResult{}
			if !ginkgo.RunSpecs(t, "svclab conformance on "+cfg.Host, suite, reporter) || t.failed {
				return fmt.Errorf("conformance failed (report: %s)", orNone(junit))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "conformance passed (report: %s)\n", orNone(junit))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	f.StringVar(&kubeContext, "context", "", "kubeconfig context (default: its current context)")
	f.StringVar(&netns, "netns", "", "reach the API server from this network namespace (svclab-docker for clusters on svclab's dockerd)")
	f.StringVar(&junit, "junit", "", "write a JUnit XML report to this file")
	f.StringVar(&focus, "focus", "", "run only the scenarios matching this regular expression")
	f.StringVar(&labels, "label-filter", "", "ginkgo label filter (distribution, nodeport, mode-switch)")
	f.StringVar(&opts.Image, "image", "svclab/netexec:dev", "svclab's image for the scenario pods and the node agent")
	f.StringVar(&opts.PullPolicy, "pull-policy", "IfNotPresent", "image pull policy (Never on clusters svclab created)")
	f.DurationVar(&opts.ReadyTimeout, "ready-timeout", 3*time.Minute, "bound of every wait (pods, endpoints, proxy syncs)")
	f.DurationVar(&timeout, "timeout", 60*time.Minute, "bound of the whole run")
	f.BoolVarP(&verbose, "verbose", "v", false, "print every spec's steps")
	return cmd
}

// suiteResult is the testing.T-like value ginkgo reports failure to.
type suiteResult struct{ failed bool }

func (s *suiteResult) Fail() { s.failed = true }

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func orNone(s string) string {
	if s == "" {
		return "none, no --junit"
	}
	return s
}
