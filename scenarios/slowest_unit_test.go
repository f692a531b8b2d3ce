package scenarios

import (
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

func TestSlowestSpecsNamesTheSlowestFirst(t *testing.T) {
	spec := func(text string, d time.Duration, state types.SpecState) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, RunTime: d, State: state}
	}
	got := slowestSpecs(types.SpecReports{
		spec("fast", 1*time.Second, types.SpecStatePassed),
		spec("slow", 3*time.Second, types.SpecStatePassed),
		spec("skipped", 9*time.Second, types.SpecStateSkipped),
		spec("middle", 2*time.Second, types.SpecStateFailed),
	}, 2)
	want := "slowest specs (of 6s spec time):\n" +
		"      3.0s 50.0%  slow\n" +
		"      2.0s 33.3%  middle\n"
	if got != want {
		t.Errorf("slowestSpecs =\n%s\nwant\n%s", got, want)
	}
}
