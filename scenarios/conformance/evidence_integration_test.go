package conformance

import (
	"context"
	"encoding/xml"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

// failingSpecEnv names the artifacts directory of the child process that
// runs TestEvidenceFailingSpecChild (ginkgo runs one suite per process).
const failingSpecEnv = "SVCLAB_EVIDENCE_FAILING_SPEC_ARTIFACTS"

// The deliberately failing specs' full texts: traced by `svclab trace`
// (the lab's own tracer), and by rule counters as on a cluster.
const (
	failingSpecText        = "evidence on failure fails on purpose after connections through its Service"
	failingCounterSpecText = "evidence on failure, traced as on a cluster fails on purpose after connections through its Service"
)

// evidenceJUnit is what this test reads of ginkgo's JUnit report.
type evidenceJUnit struct {
	Suites []struct {
		TestCases []evidenceTestCase `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestIntegrationEvidenceOnFailure: a spec that fails on a netns lab
// attaches the node's rules for its Service, the conntrack entries of
// its connections and a trace of one connection, in the JUnit report
// (the testcase's timeline and properties) and as files under the
// artifacts directory. The failing spec runs in a child process
// (TestEvidenceFailingSpecChild).
func TestIntegrationEvidenceOnFailure(t *testing.T) {
	roottest.Require(t, "the failing spec runs on a netns lab")
	dir := t.TempDir()
	report, artifacts := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "artifacts")
	child := exec.Command(os.Args[0], "-test.run=^TestEvidenceFailingSpecChild$", "-test.v", "-ginkgo.junit-report="+report, "-ginkgo.no-color")
	child.Env = append(os.Environ(), failingSpecEnv+"="+artifacts)
	out, err := child.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the run with a failing spec: %v, want it to fail\n%s", err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no JUnit report: %v\n%s", err, out)
	}
	var r evidenceJUnit
	if err := xml.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", report, err)
	}
	cases := map[string]evidenceTestCase{}
	for _, s := range r.Suites {
		for _, tc := range s.TestCases {
			cases[tc.Name] = tc
		}
	}
	traceWants := map[string][]string{
		// svclab trace's text: the pod, the node, the rules matched, the DNAT.
		failingSpecText: {"trace: lab ", "from probe", "[2] node1 (node", "rules matched (packet counter deltas)", "DNAT "},
		// The cluster's trace: the entry node's counters and conntrack entry.
		failingCounterSpecText: {counterTraceNote, "from pod probe", "[1] node1 (node", "rules matched (packet counter deltas)", "KUBE-SVC-", "DNAT "},
	}
	for spec, traceWant := range traceWants {
		tc, ok := findTestCase(cases, spec)
		if !ok {
			t.Errorf("no testcase %q in the JUnit report:\n%s\n%s", spec, data, out)
			continue
		}
		checkEvidence(t, tc, map[string][]string{
			// The Service's chains, its cluster IP rule, the DNAT to a pod.
			"evidence: rules": {"Service default/web", "proxy mode (/proxyMode on node1): iptables", "-A KUBE-SERVICES -d ", "KUBE-SVC-", "-j DNAT --to-destination 10.244."},
			// The spec's connections, DNATed.
			"evidence: conntrack": {"conntrack on node1: ", "[DNAT]", "dport=80"},
			"evidence: trace":     traceWant,
			"evidence: artifacts": {artifacts},
		})
		specDir := filepath.Join(artifacts, specDirName(spec))
		for file, want := range map[string]string{"rules.txt": "KUBE-SVC-", "conntrack.txt": "[DNAT]", "trace.txt": "rules matched"} {
			text, err := os.ReadFile(filepath.Join(specDir, file))
			if err != nil {
				t.Errorf("artifact: %v", err)
				continue
			}
			if !strings.Contains(string(text), want) {
				t.Errorf("%s does not hold %q:\n%s", file, want, text)
			}
		}
	}
}

// evidenceTestCase is one testcase of evidenceJUnit.
type evidenceTestCase = struct {
	Name    string `xml:"name,attr"`
	Status  string `xml:"status,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
	} `xml:"failure"`
	SystemErr  string `xml:"system-err"`
	Properties []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
}

// findTestCase finds the testcase of a spec by its full text (ginkgo
// names it "[It] TEXT").
func findTestCase(cases map[string]evidenceTestCase, spec string) (evidenceTestCase, bool) {
	for name, tc := range cases {
		if strings.Contains(name, spec) {
			return tc, true
		}
	}
	return evidenceTestCase{}, false
}

// checkEvidence: the testcase failed on purpose, and each report entry
// holds its wanted texts, in the properties and in the timeline.
func checkEvidence(t *testing.T, tc evidenceTestCase, wants map[string][]string) {
	t.Helper()
	if tc.Status != "failed" || tc.Failure == nil || !strings.Contains(tc.Failure.Message, "on purpose") {
		t.Errorf("testcase %q: status %s, failure %+v: want it failed on purpose", tc.Name, tc.Status, tc.Failure)
	}
	props := map[string]string{}
	for _, p := range tc.Properties {
		props[p.Name] = p.Value
	}
	for entry, texts := range wants {
		for _, want := range texts {
			if !strings.Contains(props[entry], jsonQuoted(want)) {
				t.Errorf("%s: property %q does not hold %q:\n%s", tc.Name, entry, want, props[entry])
			}
			if !strings.Contains(tc.SystemErr, want) {
				t.Errorf("%s: the timeline (system-err) does not hold %q of %q", tc.Name, want, entry)
			}
		}
	}
}

// jsonQuoted is s as it appears inside a JSON string (a property's value
// is the JSON of the report entry's string).
func jsonQuoted(s string) string {
	return strings.NewReplacer(`"`, `\"`, "\n", `\n`).Replace(s)
}

// TestEvidenceFailingSpecChild is TestIntegrationEvidenceOnFailure's
// child: one spec on the split scenario's workload (a Service over two
// pods and a probe pod, on a one-node netns lab) that sends connections
// through the Service and then fails on purpose.
func TestEvidenceFailingSpecChild(t *testing.T) {
	artifacts := os.Getenv(failingSpecEnv)
	if artifacts == "" {
		t.Skip("run by TestIntegrationEvidenceOnFailure, in a child process")
	}
	bin, err := roottest.Binary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{opts: Options{Image: kind.NetexecImage, PullPolicy: "IfNotPresent", Artifacts: artifacts}}
	BeforeSuite(func() { s.target = &netnslab.LabTarget{Binary: bin} })
	Describe("evidence on failure", Ordered, func() {
		w := s.newWeb(familyRun{}, "evidence", 2)
		It("fails on purpose after connections through its Service", func(ctx SpecContext) {
			res, err := (*w.ws).Traffic(ctx, w.fromProbe(), w.vip(), 10)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Succeeded).To(Equal(10), "the Service answers before the failure")
			Fail("on purpose: the evidence attached to this failure is what the test checks")
		})
	})
	// The same, traced as on a cluster: the workspace without the lab's
	// tracer, so the trace is counterTrace's.
	Describe("evidence on failure, traced as on a cluster", Ordered, func() {
		ws := s.workspace(familyRun{}, "evcounters", 1, func(context.Context, kit.Workspace) string { return s.webService(2) })
		var subject evidenceSubject
		BeforeAll(func(ctx SpecContext) {
			svc, err := (*ws).Service(ctx, "web")
			Expect(err).NotTo(HaveOccurred())
			probes, err := (*ws).Pods(ctx, "probe")
			Expect(err).NotTo(HaveOccurred())
			Expect(probes).To(HaveLen(1))
			probe := kit.Client{Pod: probes[0].Name, Node: probes[0].Spec.NodeName}
			vip := netip.AddrPortFrom(netip.MustParseAddr(svc.Spec.ClusterIP), 80)
			subject = evidenceSubject{ws: withoutTracer{*ws}, svc: svc, node: probe.Node, from: probe, to: vip}
		})
		s.evidenceOnFailure(func() evidenceSubject { return subject })
		It("fails on purpose after connections through its Service", func(ctx SpecContext) {
			res, err := subject.ws.Traffic(ctx, subject.from, subject.to, 10)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Succeeded).To(Equal(10), "the Service answers before the failure")
			Fail("on purpose: the evidence attached to this failure is what the test checks")
		})
	})
	RegisterFailHandler(Fail)
	RunSpecs(t, "evidence on failure")
}

// withoutTracer is a workspace seen through kit.Workspace alone, as a
// cluster's: no kit.ConnectionTracer, no kit.IPVSLister.
type withoutTracer struct{ kit.Workspace }
