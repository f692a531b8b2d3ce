package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/svclab/svclab/internal/kubeconfig"
	"github.com/svclab/svclab/scenarios/conformance"
	"github.com/svclab/svclab/scenarios/conformance/cmdline"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/kube"
)

// specTreeEnv, when set, makes this binary's TestSpecTree write the
// suite's spec tree (ginkgo's dry run: nothing runs) as JSON to the file
// it names: what listSpecs reads, from a child process, as ginkgo runs
// one suite per process and the real run needs its own.
const specTreeEnv = "SVCLAB_CONFORMANCE_SPEC_TREE"

// specInfo is one spec of the tree.
type specInfo struct {
	// Text is its containers' texts and its own, space-joined (what
	// --focus matches).
	Text string `json:"text"`
	// Labels are its containers' and its own.
	Labels []string `json:"labels"`
}

// preflight is TestConformance's first step. Before a run it checks that
// --label-filter and --focus name labels and specs the suite has (an
// error lists the ones it has); with --dry-run it prints what it finds on
// the cluster, with API reads only, and which specs would run or skip and
// why, and says the run is done.
func preflight(t *testing.T, f cmdline.Flags) (done bool) {
	suite, _ := GinkgoConfiguration()
	if !f.DryRun && suite.LabelFilter == "" && len(suite.FocusStrings) == 0 {
		return false
	}
	specs, err := listSpecs(preflightFamilies(t.Context(), f))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := newSelection(specs, suite.LabelFilter, suite.FocusStrings, suite.SkipStrings)
	if err != nil {
		t.Fatal(err)
	}
	if !f.DryRun {
		return false
	}
	if err := dryRun(t.Context(), os.Stdout, f, specs, sel); err != nil {
		t.Fatal(err)
	}
	return true
}

// dryRun inspects the cluster of f (kube.Inspect: gets and lists only)
// and prints the report.
func dryRun(ctx context.Context, w io.Writer, f cmdline.Flags, specs []specInfo, sel selection) error {
	cfg, source, err := dryRunConfig(f)
	if err != nil {
		return err
	}
	selector, err := kube.ParseNodeSelector(f.NodeSelector)
	if err != nil {
		return err
	}
	in, err := kube.Inspect(ctx, cfg, kube.Options{Source: source, NodeSelector: selector, TolerateAll: f.TolerateAll, ProxyConfig: f.ProxyConfig})
	if err != nil {
		return err
	}
	writeDryRun(w, in, f.Disruptive, specs, sel)
	return nil
}

// dryRunConfig is the rest.Config of the cluster f names: a dry run needs
// one that exists.
func dryRunConfig(f cmdline.Flags) (*rest.Config, string, error) {
	switch {
	case f.Kubeconfig != "":
		cfg, err := kubeconfig.Load(f.Kubeconfig, f.Context, f.Netns)
		return cfg, f.Kubeconfig, err
	case f.InCluster:
		cfg, err := rest.InClusterConfig()
		return cfg, "the in-cluster service account", err
	}
	return nil, "", errors.New("-dry-run reads a cluster that exists: give -kubeconfig or -in-cluster (a -kind-config cluster is made only by a run)")
}

// writeDryRun prints what was found and, for each spec, "run" or "skip:"
// and why.
func writeDryRun(w io.Writer, in *kube.Inspection, disruptive bool, specs []specInfo, sel selection) {
	p := in.Proxy
	fmt.Fprintf(w, "svclab conformance --dry-run on %s (API reads only: nothing was created)\n", in.Server)
	fmt.Fprintf(w, "proxy:      %s (%s)\n", p.Kind, p.Where)
	if p.WritesKubeProxyRules() {
		fmt.Fprintf(w, "mode:       %s, from %s (a run asks the nodes' /proxyMode)\n", p.Mode, p.ModeFrom)
		fmt.Fprintf(w, "config:     %s\n            from %s\n", p.Config, p.ConfigFrom)
		configMap := p.ConfigMap
		if configMap == "" {
			configMap = "none"
		}
		fmt.Fprintf(w, "ConfigMap:  %s\n", configMap)
		fmt.Fprintf(w, "metrics:    a run reads the nodes' :10249/metrics (without them it waits for the proxy by connections)\n")
	}
	fmt.Fprintf(w, "nodes:      %d, %d the scenarios can use\n", len(in.Nodes), in.Usable())
	for _, n := range in.Nodes {
		if n.Unusable != "" {
			fmt.Fprintf(w, "            %s: %s\n", n.Name, n.Unusable)
		}
	}
	fmt.Fprintf(w, "LoadBalancer addresses: %s\n", in.LoadBalancer)
	facts := conformance.Facts{Proxy: p, Disruptive: disruptive, Nodes: in.Usable()}
	var lines []string
	runs := 0
	for _, s := range specs {
		decision := "run   "
		if reason := sel.skipReason(s); reason != "" {
			decision = "skip: " + reason + ": "
		} else if reason := conformance.SkipReason(s.Labels, facts); reason != "" {
			decision = "skip: " + reason + ": "
		} else {
			runs++
		}
		lines = append(lines, "  "+decision+s.Text)
	}
	fmt.Fprintf(w, "specs:      %d, %d run, %d skip\n%s\n", len(specs), runs, len(specs)-runs, strings.Join(lines, "\n"))
}

// selection is what --label-filter, --focus and --skip select.
type selection struct {
	labelFilter types.LabelFilter
	focus, skip *regexp.Regexp
}

// newSelection checks the filters against the spec tree: every label the
// label filter names is one of the suite's (a /regexp/ matches one),
// every focus matches a spec; the error lists the suite's labels or
// specs.
func newSelection(specs []specInfo, labelFilter string, focus, skip []string) (selection, error) {
	var sel selection
	if labelFilter != "" {
		lf, err := types.ParseLabelFilter(labelFilter)
		if err != nil {
			return sel, fmt.Errorf("--label-filter %q: %w", labelFilter, err)
		}
		sel.labelFilter = lf
		if err := checkLabels(labelFilter, knownLabels(specs)); err != nil {
			return sel, err
		}
	}
	if len(focus) > 0 {
		re, err := regexp.Compile(strings.Join(focus, "|"))
		if err != nil {
			return sel, fmt.Errorf("--focus %q: %w", focus, err)
		}
		sel.focus = re
		for _, f := range focus {
			if !slices.ContainsFunc(specs, func(s specInfo) bool { return regexp.MustCompile(f).MatchString(s.Text) }) {
				return sel, fmt.Errorf("--focus %q matches no spec of the suite; its specs:\n  %s", f, strings.Join(specTexts(specs), "\n  "))
			}
		}
	}
	if len(skip) > 0 {
		re, err := regexp.Compile(strings.Join(skip, "|"))
		if err != nil {
			return sel, fmt.Errorf("--skip %q: %w", skip, err)
		}
		sel.skip = re
	}
	return sel, nil
}

// skipReason is why the selection leaves a spec out ("" it is in).
func (sel selection) skipReason(s specInfo) string {
	switch {
	case sel.labelFilter != nil && !sel.labelFilter(s.Labels):
		return "not selected by --label-filter"
	case sel.focus != nil && !sel.focus.MatchString(s.Text):
		return "not selected by --focus"
	case sel.skip != nil && sel.skip.MatchString(s.Text):
		return "left out by --skip"
	}
	return ""
}

// checkLabels says which labels a label filter names that the suite does
// not have. A filter's words are the text between its operators (&& || !
// , and parentheses); a /regexp/ must match one of the suite's labels.
// Set operations on key:value labels (ginkgo's `key: containsAny {…}`)
// are left to ginkgo.
func checkLabels(filter string, known []string) error {
	lower := map[string]bool{}
	for _, l := range known {
		lower[strings.ToLower(l)] = true
	}
	var unknown []string
	for _, word := range regexp.MustCompile(`/[^/]*/|[^&|!,()/]+`).FindAllString(filter, -1) {
		word = strings.TrimSpace(word)
		switch {
		case word == "" || strings.ContainsAny(word, ":{}"):
		case strings.HasPrefix(word, "/"):
			re, err := regexp.Compile("(?i)" + strings.Trim(word, "/"))
			if err == nil && !slices.ContainsFunc(known, re.MatchString) {
				unknown = append(unknown, word)
			}
		case !lower[strings.ToLower(word)]:
			unknown = append(unknown, fmt.Sprintf("%q", word))
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("--label-filter %q names labels the suite does not have: %s; its labels: %s",
			filter, strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return nil
}

// knownLabels are the labels of the specs, sorted.
func knownLabels(specs []specInfo) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range specs {
		for _, l := range s.Labels {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	sort.Strings(out)
	return out
}

func specTexts(specs []specInfo) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Text)
	}
	return out
}

// listSpecs is the suite's spec tree, from this binary run again as a
// child (specTreeEnv): ginkgo builds a tree once per process.
func listSpecs(families []corev1.IPFamily) ([]specInfo, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "svclab-spec-tree-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "tree.json")
	cmd := exec.Command(exe, "-test.run=^TestSpecTree$")
	cmd.Env = append(os.Environ(), specTreeEnv+"="+file, specTreeFamiliesEnv+"="+joinFamilies(families))
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("listing the suite's specs (%s): %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("listing the suite's specs: %w", err)
	}
	var specs []specInfo
	return specs, json.Unmarshal(data, &specs)
}

// TestSpecTree is the child of listSpecs when specTreeEnv is set: it
// registers the suite and runs ginkgo's dry run (no set-up, no spec
// body), writing every spec's text and labels. Without it (go test) it
// checks, through listSpecs, the tree the binary has, the requirement
// labels, and the checks of --label-filter and --focus; in a run of the
// suite (-kubeconfig, -kind-config, -in-cluster) it skips: that process's
// one ginkgo suite is the run's.
func TestSpecTree(t *testing.T) {
	if file := os.Getenv(specTreeEnv); file != "" {
		writeSpecTree(t, file)
		return
	}
	if flags.Kubeconfig != "" || flags.KindConfig != "" || flags.InCluster {
		t.Skip("a run of the suite: its ginkgo suite is the run's")
	}
	specs, err := listSpecs(nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRequirementLabels(t, specs)
	checkSelectionErrors(t, specs)
}

// writeSpecTree runs ginkgo's dry run of the suite and writes its specs.
func writeSpecTree(t *testing.T, file string) {
	err := conformance.Register(conformance.Options{Setup: func(context.Context) (kit.Target, error) {
		return nil, errors.New("the spec tree's dry run has no target")
	}, Families: splitFamilies(os.Getenv(specTreeFamiliesEnv))})
	if err != nil {
		t.Fatal(err)
	}
	ReportAfterSuite("the spec tree", func(r Report) {
		// In the order of the source (ginkgo shuffles the top containers).
		reports := slices.DeleteFunc(slices.Clone(r.SpecReports), func(s types.SpecReport) bool { return s.LeafNodeType != types.NodeTypeIt })
		slices.SortStableFunc(reports, func(a, b types.SpecReport) int { return strings.Compare(sourceOrder(a), sourceOrder(b)) })
		var specs []specInfo
		for _, s := range reports {
			specs = append(specs, specInfo{Text: s.FullText(), Labels: s.Labels()})
		}
		data, err := json.Marshal(specs)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(file, data, 0o644)).To(Succeed())
	})
	suite, reporter := GinkgoConfiguration()
	suite.DryRun, suite.LabelFilter, suite.FocusStrings, suite.SkipStrings = true, "", nil, nil
	reporter.Succinct, reporter.JUnitReport, reporter.JSONReport = true, "", ""
	RegisterFailHandler(Fail)
	RunSpecs(t, "svclab conformance: the spec tree", suite, reporter)
}

// sourceOrder sorts a spec by where its outermost container and itself
// are declared.
func sourceOrder(s types.SpecReport) string {
	top := s.LeafNodeLocation
	if len(s.ContainerHierarchyLocations) > 0 {
		top = s.ContainerHierarchyLocations[0]
	}
	return fmt.Sprintf("%s:%08d:%08d", top.FileName, top.LineNumber, s.LeafNodeLocation.LineNumber)
}

// checkRequirementLabels: the specs that assert kube-proxy's internals,
// restart the proxy or need two nodes say so with the labels SkipReason
// decides on.
func checkRequirementLabels(t *testing.T, specs []specInfo) {
	t.Helper()
	if len(specs) < 8 {
		t.Fatalf("%d specs in the tree, want the suite's (at least 8): %v", len(specs), specTexts(specs))
	}
	want := map[string][]string{
		"switching the proxy mode":              {conformance.LabelDisruptive, conformance.LabelModeSwitch},
		"programs the Service: upstream's":      {conformance.LabelKubeProxyInternals},
		"programs the 1/3, 1/2, catch-all":      {conformance.LabelKubeProxyInternals},
		"cross-node NodePort with SNAT answers": {conformance.LabelCrossNode},
	}
	for prefix, labels := range want {
		found := false
		for _, s := range specs {
			if strings.Contains(s.Text, prefix) {
				found = true
				for _, l := range labels {
					if !slices.Contains(s.Labels, l) {
						t.Errorf("spec %q: labels %v, want %s", s.Text, s.Labels, l)
					}
				}
			}
		}
		if !found {
			t.Errorf("no spec %q… in the tree", prefix)
		}
	}
	for _, s := range specs {
		if strings.Contains(s.Text, "splits connections from") && slices.Contains(s.Labels, conformance.LabelKubeProxyInternals) {
			t.Errorf("behaviour spec %q is labelled %s: it must run whatever proxies Services", s.Text, conformance.LabelKubeProxyInternals)
		}
	}
}

// checkSelectionErrors: an unknown label or a focus that matches nothing
// is an error that lists the suite's labels or specs; known ones pass.
func checkSelectionErrors(t *testing.T, specs []specInfo) {
	t.Helper()
	if _, err := newSelection(specs, "distribution && !(Disruptive || /^node/)", []string{"split"}, nil); err != nil {
		t.Errorf("known labels and a focus that matches: %v", err)
	}
	_, err := newSelection(specs, "distribution || nodeprot", nil, nil)
	if err == nil || !strings.Contains(err.Error(), `names labels the suite does not have: "nodeprot"; its labels: `) ||
		!strings.Contains(err.Error(), "distribution") || !strings.Contains(err.Error(), conformance.LabelDisruptive) {
		t.Errorf("an unknown label: error %v, want it named and the suite's labels listed", err)
	}
	if _, err := newSelection(specs, "/^nomatch$/", nil, nil); err == nil || !strings.Contains(err.Error(), "/^nomatch$/") {
		t.Errorf("a label regexp that matches no label: error %v", err)
	}
	if _, err := newSelection(specs, "distribution &&", nil, nil); err == nil {
		t.Error("a label filter that does not parse: no error")
	}
	_, err = newSelection(specs, "", []string{"no such spec"}, nil)
	if err == nil || !strings.Contains(err.Error(), `--focus "no such spec" matches no spec of the suite; its specs:`) ||
		!strings.Contains(err.Error(), "two-pod 50/50 split") {
		t.Errorf("a focus that matches nothing: error %v, want the suite's specs listed", err)
	}
}

// TestWriteDryRun: the report says what was found and, per spec, run or
// skip and why — the reasons SkipReason gives and the selection's.
func TestWriteDryRun(t *testing.T) {
	specs := []specInfo{
		{Text: "two-pod 50/50 split splits connections from a pod 50/50", Labels: []string{"distribution"}},
		{Text: "two-pod 50/50 split programs the Service", Labels: []string{"distribution", conformance.LabelKubeProxyInternals}},
		{Text: "switching the proxy mode switches", Labels: []string{conformance.LabelDisruptive, conformance.LabelModeSwitch}},
		{Text: "cross-node NodePort with SNAT answers", Labels: []string{"nodeport", conformance.LabelCrossNode}},
		{Text: "hairpin: a pod through its own Service answers", Labels: []string{"hairpin"}},
	}
	cilium := &kube.Inspection{Server: "https://203.0.113.1:6443",
		Proxy:        kit.Proxy{Kind: kit.ProxyOther, Where: "no DaemonSet runs kube-proxy or `svclab proxy`; DaemonSet kube-system/cilium (quay.io/cilium/cilium:v1.16.5)"},
		Nodes:        []kube.InspectedNode{{Name: "cp", Unusable: "taint node-role.kubernetes.io/control-plane:NoSchedule (--tolerate-all)"}, {Name: "w1"}},
		LoadBalancer: "unknown until run: no Service of type LoadBalancer has an address and no known controller runs"}
	sel, err := newSelection(specs, "!hairpin", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeDryRun(&b, cilium, false, specs, sel)
	out := b.String()
	for _, want := range []string{
		"svclab conformance --dry-run on https://203.0.113.1:6443 (API reads only: nothing was created)",
		"proxy:      other (no DaemonSet runs kube-proxy or `svclab proxy`; DaemonSet kube-system/cilium (quay.io/cilium/cilium:v1.16.5))",
		"nodes:      2, 1 the scenarios can use",
		"cp: taint node-role.kubernetes.io/control-plane:NoSchedule (--tolerate-all)",
		"LoadBalancer addresses: unknown until run",
		"specs:      5, 1 run, 4 skip",
		"  run   two-pod 50/50 split splits connections from a pod 50/50",
		"  skip: the Service proxy is not kube-proxy (found: no DaemonSet runs kube-proxy or `svclab proxy`; DaemonSet kube-system/cilium (quay.io/cilium/cilium:v1.16.5)): kube-proxy's rules are not checked: two-pod 50/50 split programs the Service",
		"  skip: " + conformance.DisruptiveReason + ": switching the proxy mode switches",
		"  skip: cross-node: needs 2 nodes the scenarios can use, the cluster has 1: cross-node NodePort with SNAT answers",
		"  skip: not selected by --label-filter: hairpin: a pod through its own Service answers",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say\n  %s\nreport:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mode:") {
		t.Errorf("a proxy that is not kube-proxy has no mode or config to report:\n%s", out)
	}
}
