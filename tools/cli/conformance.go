package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/internal/kubeconfig"
	"github.com/svclab/svclab/scenarios/conformance/cmdline"
)

// newConformance is `svclab conformance`: the scenarios against any
// cluster, as a CI conformance suite with a JUnit report. The suite is a
// test binary of its own (bin/svclab-conformance.test, as Kubernetes
// ships e2e.test), so svclab links no test framework: this command checks
// that the cluster answers, then runs that binary with the flags of
// package cmdline, its output streamed and its exit status passed on.
func newConformance() *cobra.Command {
	f := cmdline.Flags{}
	var report *reportOutput // -o and --done-file, set below
	cmd := &cobra.Command{
		Use:   "conformance [--kubeconfig FILE] [--junit FILE]",
		Short: "Run the scenarios against a Kubernetes cluster (kind or not) and write a JUnit XML report",
		Example: "  sudo svclab conformance --junit report.xml                # the kubeconfig as kubectl finds it\n" +
			"  sudo svclab conformance --kubeconfig /var/lib/svclab/kind/clusters/demo.kubeconfig --junit report.xml",
		Long: "Runs svclab's conformance scenarios — two-pod split, three-pod ladder, cross-node NodePort with SNAT, " +
			"proxy-mode switch through the kube-proxy ConfigMap — against the cluster of a kubeconfig, found as kubectl " +
			"finds it (--kubeconfig, else the files $KUBECONFIG lists, merged, else ~/.kube/config). " +
			"Each scenario works in a namespace of its own; a node agent (a hostNetwork DaemonSet of svclab's image with " +
			"four capabilities, no token) reads conntrack, iptables-save and nft on the nodes. Everything is deleted at the end, " +
			"and what a killed run left is swept by the next run or `svclab conformance cleanup`; `svclab conformance rbac` prints the RBAC it needs. " +
			"The image must be pullable by the nodes, or loaded (clusters from `svclab create cluster` have it). " +
			"The suite is the test binary " + cmdline.Binary + " beside svclab (`make build` builds both), or $" + cmdline.BinaryEnv + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := cmdline.IPFamilies(f.IPFamily); err != nil {
				return fmt.Errorf("--ip-family %q: want ipv4, ipv6 or dual (default: every family the cluster has)", f.IPFamily)
			}
			cfg, source, cleanup, err := clusterConfig(f.Kubeconfig, f.Context, f.Netns, f.InCluster) // conformance_cleanup.go
			if err != nil {
				return err
			}
			defer cleanup()
			if !f.InCluster {
				f.Kubeconfig = source
			}
			// Reach the cluster before the suite starts: an unreachable
			// cluster is one clear error, not a failed suite, and nothing
			// is created.
			if err := kubeconfig.Reach(cmd.Context(), cfg, source); err != nil {
				return err
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
				fmt.Fprintf(cmd.ErrOrStderr(), "error: conformance failed (report: %s)\n", report.describe(f.JUnit))
				return exitCode(code)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "conformance passed (report: %s)\n", report.describe(f.JUnit))
			return nil
		},
	}
	cmd.AddCommand(newConformanceRBAC(), newConformanceCleanup(), newConformanceManifest())
	report = addReportOutput(cmd, &f) // conformance_output.go: -o table|junit, --done-file
	fl := cmd.Flags()
	fl.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: as kubectl finds it, $KUBECONFIG, else ~/.kube/config)")
	fl.BoolVar(&f.InCluster, "in-cluster", false, "run on the cluster this runs in (a Job's pod), with its service account")
	fl.StringVar(&f.Context, "context", "", "kubeconfig context (default: its current context)")
	fl.StringVar(&f.Netns, "netns", "", "reach the API server from this network namespace (svclab-docker for clusters on svclab's dockerd)")
	fl.StringVar(&f.JUnit, "junit", "", "write a JUnit XML report to this file")
	fl.StringVar(&f.Focus, "focus", "", "run only the scenarios matching this regular expression")
	fl.StringVar(&f.IPFamily, "ip-family", "", "the IP families the specs run in: ipv4, ipv6 or dual (both, and the dual-stack specs); default every family the cluster has (as upstream e2e's --ip-family)")
	fl.StringVar(&f.LabelFilter, "label-filter", "", "ginkgo label filter, e.g. 'nodeport && !udp', over the specs' labels: "+
		strings.Join(cmdline.LabelNames(), ", ")+" (--dry-run prints each spec's)")
	fl.StringVar(&f.Image, "image", cmdline.DefaultImage, "svclab's image for the scenario pods and the node agent")
	fl.StringVar(&f.PullPolicy, "pull-policy", cmdline.DefaultPullPolicy, "image pull policy (Never on clusters svclab created)")
	fl.DurationVar(&f.ReadyTimeout, "ready-timeout", cmdline.DefaultReadyTimeout, "bound of every wait (pods, endpoints, proxy syncs)")
	fl.DurationVar(&f.Timeout, "timeout", cmdline.DefaultTimeout, "bound of the whole run")
	fl.BoolVarP(&f.Verbose, "verbose", "v", false, "print every spec's steps")
	fl.BoolVar(&f.AllowTag, "allow-tag", false, "allow an --image that is not digest-pinned on a cluster svclab did not create (a warning)")
	fl.StringVar(&f.ServerImage, "server-image", "", "the scenario pods' server image (default: --image; upstream's registry.k8s.io/e2e-test-images/agnhost:2.53 works)")
	fl.StringVar(&f.NodeSelector, "node-selector", "", "run the node agent only on nodes with these labels (k=v,k2=v2)")
	fl.BoolVar(&f.TolerateAll, "tolerate-all", false, "let the node agent run on tainted nodes (control planes) too")
	fl.StringVar(&f.ProxyConfig, "proxy-config", "", "NAMESPACE/NAME of the ConfigMap with the proxy's KubeProxyConfiguration (default: kube-system/kube-proxy, else the proxy pods' flags)")
	fl.BoolVar(&f.Disruptive, "disruptive", false, "also run the Disruptive specs: the mode switch rewrites the proxy's ConfigMap and restarts its pods (restored at the end, and by `svclab conformance cleanup` after a killed run)")
	fl.BoolVar(&f.DryRun, "dry-run", false, "print what proxies Services on the cluster and which specs would run or skip, and why; change nothing")
	fl.StringVar(&f.Artifacts, "artifacts", "", "write each failed spec's evidence (the node's rules for its Service, conntrack entries, a trace) under this directory")
	return cmd
}

// runSuite runs the conformance test binary with args, its output to the
// command's, and returns its exit status. The binary runs in a process
// group of its own and gets SIGINT and SIGTERM from here exactly once
// each time svclab gets them (a ^C reaches only svclab's group): ginkgo
// then runs the suite's cleanup (namespaces, the node agent) before it
// exits; a second signal makes it give up.
func runSuite(cmd *cobra.Command, bin string, args []string) (int, error) {
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	if err := c.Start(); err != nil {
		return 0, fmt.Errorf("conformance suite %s: %w", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	for {
		select {
		case s := <-signals:
			c.Process.Signal(s)
		case err := <-done:
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				if code := exit.ExitCode(); code >= 0 {
					return code, nil
				}
				return 1, nil // killed by a signal
			}
			if err != nil {
				return 0, fmt.Errorf("conformance suite %s: %w", bin, err)
			}
			return 0, nil
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "none, no --junit"
	}
	return s
}
