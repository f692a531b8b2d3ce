package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/scenarios/conformance/cmdline"
	"github.com/svclab/svclab/tools/workshop"
)

// completions runs `svclab __complete ARGS…` (what the shells' scripts
// run) and returns the candidates, without the directive line.
func completions(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := run(append([]string{"__complete"}, args...)...)
	if err != nil {
		t.Fatalf("__complete %q: %v\n%s", args, err, out)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" || strings.HasPrefix(line, ":") || strings.HasPrefix(line, "Completion ended") {
			continue
		}
		got = append(got, line)
	}
	return got
}

func TestFlagCompletionsAreRegistered(t *testing.T) {
	if err := registerFlagCompletions(newRootWithoutCompletions()); err != nil {
		t.Fatal(err)
	}
}

// newRootWithoutCompletions is newRoot as it was before the flag
// completions were registered (registering twice is an error).
func newRootWithoutCompletions() *cobra.Command {
	saved := flagCompletions
	flagCompletions = nil
	defer func() { flagCompletions = saved }()
	return newRoot()
}

func TestCompleteValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"create", "cluster", "--cni", ""}, []string{"flannel-vxlan", "calico-proxyarp", "flannel", "calico"}},
		{[]string{"create", "cluster", "--proxy", "s"}, []string{"stock", "svclab"}},
		{[]string{"tour", "nodeport", "--cni", "ca"}, []string{"calico-proxyarp", "canal"}},
		{[]string{"bench", "dataplane", "--modes", "iptables,n"}, []string{"iptables,nftables"}},
		{[]string{"bench", "dataplane", "--modes", "ipvs,iptables"}, []string{"ipvs,iptables", "ipvs,iptables-legacy", "ipvs,iptables-nft"}},
		{[]string{"conformance", "--label-filter", "nodeport && !u"}, []string{"nodeport && !udp\tUDP Services"}},
		{[]string{"create", "lab", "--config", "single"}, []string{"single-node"}},
		{[]string{"create", "cluster", "--config", "flannel"}, []string{"flannel-dual", "flannel-ipv6", "flannel-vxlan", "flannel"}},
		{[]string{"apply", "-f", "workloads/n"}, nil}, // a path: the shell's files
		{[]string{"apply", "-f", "workloads"}, []string{"workloads/httpserver.yaml", "workloads/nginx.yaml", "workloads/service-types-all.yaml", "workloads/service-types.yaml", "workloads/servicenet.yaml", "workloads/two-pods.yaml"}},
	} {
		if got := completions(t, tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestCompleteLabelFilterOffersEveryLabel: an empty filter, or one after
// an operator, is completed with every label of the suite.
func TestCompleteLabelFilterOffersEveryLabel(t *testing.T) {
	for _, typed := range []string{"", "udp,", "(nodeport || ", "!"} {
		got := completions(t, "conformance", "--label-filter", typed)
		if len(got) != len(cmdline.SpecLabels) {
			t.Errorf("--label-filter %q: %d candidates, want the %d labels: %q", typed, len(got), len(cmdline.SpecLabels), got)
		}
		for _, c := range got {
			if !strings.HasPrefix(c, typed) {
				t.Errorf("--label-filter %q: candidate %q does not keep what was typed", typed, c)
			}
		}
	}
}

// TestCompleteLessonsAndExercises: workshop start and tour lesson complete
// the lessons (the checkout's here, or --lessons'), workshop check and
// hint the exercises of the lesson in progress.
func TestCompleteLessonsAndExercises(t *testing.T) {
	checkout, err := workshop.ListLessons(filepath.Join("..", "..", "clusters", "lessons"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range checkout {
		names = append(names, l.Metadata.Name)
	}
	if got := completions(t, "workshop", "start", ""); !slices.Equal(got, names) {
		t.Errorf("workshop start: %q, want the checkout's lessons %q", got, names)
	}
	if got := completions(t, "tour", "lesson", "seed-00"); len(got) == 0 || !slices.Equal(got, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !strings.HasPrefix(n, "seed-00") })) {
		t.Errorf("tour lesson seed-00: %q", got)
	}
	teacher := t.TempDir()
	src := filepath.Join("..", "..", "clusters", "lessons", "example-clusterip")
	if err := os.CopyFS(filepath.Join(teacher, "mine"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if got := completions(t, "workshop", "start", "--lessons", teacher, ""); !slices.Equal(got, []string{"mine"}) {
		t.Errorf("workshop start --lessons DIR: %q, want [mine]", got)
	}

	t.Setenv("SVCLAB_WORKSHOP_DIR", filepath.Join(t.TempDir(), "workshop"))
	if got := completions(t, "workshop", "check", ""); got != nil {
		t.Errorf("workshop check with no lesson in progress: %q, want none", got)
	}
	l, err := workshop.Load(filepath.Join("..", "..", "clusters", "lessons", "seed-001-ladder"))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&workshop.State{Lesson: l.Metadata.Name, LessonDir: l.Dir, Lab: "x", Cursor: -1}).Save(); err != nil {
		t.Fatal(err)
	}
	var exercises []string
	for _, ex := range l.Spec.Exercises {
		exercises = append(exercises, ex.Name)
	}
	for _, sub := range []string{"check", "hint"} {
		if got := completions(t, "workshop", sub, ""); len(got) == 0 || !slices.Equal(got, exercises) {
			t.Errorf("workshop %s: %q, want the lesson's exercises %q", sub, got, exercises)
		}
	}
}
