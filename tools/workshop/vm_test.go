package workshop

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/internal/vm/vmtest"
)

// TestLessonsInVM runs, inside svclab's VM (Debian's stock kernel, which
// has IPVS), TestLessons for the lessons with steps or exercises marked
// `requires: [ipvs]`, when this kernel has no IPVS and TestLessons skips
// those parts here. It fails unless every such step and exercise ran and
// passed in the VM: a skip there is a failure.
func TestLessonsInVM(t *testing.T) {
	if roottest.HasIPVS() {
		t.Skip("this kernel has IPVS: TestLessons runs the IPVS steps and exercises directly")
	}
	lessons, parts := ipvsLessons(t)
	if len(lessons) == 0 {
		t.Skip("no lesson requires IPVS")
	}
	pattern := "^TestLessons$/^(" + strings.Join(quoteEach(lessons), "|") + ")$"
	out := vmtest.Run(t, vmtest.Options{
		Package: "./tools/workshop",
		Args:    []string{"-test.run", pattern, "-test.v", "-test.timeout", "24m"},
		Timeout: 25 * time.Minute, // seed-002 takes about 4 minutes there, boot included
	})
	for _, p := range parts {
		if !strings.Contains(out, "--- PASS: "+p+" ") {
			t.Errorf("%s did not pass in the VM (skipped, failed or not run)", p)
		}
	}
}

// ipvsLessons returns the lessons that have steps or exercises requiring
// IPVS, and those parts' full subtest names (TestLessons/LESSON/step-NAME,
// or TestLessons/LESSON/CNI/step-NAME for a lesson with spec.cnis).
func ipvsLessons(t *testing.T) (lessons, parts []string) {
	t.Helper()
	all, err := ListLessons(lessonsDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		name := filepath.Base(l.Dir) // TestLessons' subtest
		prefixes := []string{"TestLessons/" + name + "/"}
		if len(l.Spec.CNIs) > 0 {
			prefixes = nil
			for _, cni := range l.Spec.CNIs {
				prefixes = append(prefixes, "TestLessons/"+name+"/"+cni+"/")
			}
		}
		var mine []string
		for _, prefix := range prefixes {
			for _, st := range l.Spec.Steps {
				if slices.Contains(st.Requires, "ipvs") {
					mine = append(mine, prefix+stepTestName(st.Name))
				}
			}
			for _, ex := range l.Spec.Exercises {
				if slices.Contains(ex.Requires, "ipvs") {
					mine = append(mine, prefix+exerciseTestName(ex.Name))
				}
			}
		}
		if len(mine) > 0 {
			lessons = append(lessons, name)
			parts = append(parts, mine...)
		}
	}
	return lessons, parts
}

func quoteEach(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = regexp.QuoteMeta(n)
	}
	return out
}
