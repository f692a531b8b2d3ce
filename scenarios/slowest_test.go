package scenarios

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// slowestShown is how many specs the suite's closing report names.
const slowestShown = 10

// The suite ends by naming its slowest specs, so whoever makes the suite
// faster starts from numbers: go test -v prints them, and with
// SVCLAB_SLOWEST_SPECS=FILE (make test sets it) they go to FILE too, which
// make test prints at its end.
var _ = ReportAfterSuite("the slowest specs", func(r Report) {
	text := slowestSpecs(r.SpecReports, slowestShown)
	fmt.Fprint(GinkgoWriter, text)
	if file := os.Getenv("SVCLAB_SLOWEST_SPECS"); file != "" {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			fmt.Fprintf(GinkgoWriter, "writing the slowest specs: %v\n", err)
		}
	}
})

// slowestSpecs lists the n slowest specs that ran, slowest first, with
// their run time and share of the suite's spec time.
func slowestSpecs(specs types.SpecReports, n int) string {
	var ran []types.SpecReport
	var total time.Duration
	for _, s := range specs {
		if s.LeafNodeType != types.NodeTypeIt || s.State.Is(types.SpecStateSkipped|types.SpecStatePending) {
			continue
		}
		ran = append(ran, s)
		total += s.RunTime
	}
	sort.SliceStable(ran, func(i, j int) bool { return ran[i].RunTime > ran[j].RunTime })
	if len(ran) > n {
		ran = ran[:n]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "slowest specs (of %s spec time):\n", total.Round(time.Second))
	for _, s := range ran {
		share := 0.0
		if total > 0 {
			share = 100 * float64(s.RunTime) / float64(total)
		}
		fmt.Fprintf(&b, "  %7.1fs %4.1f%%  %s\n", s.RunTime.Seconds(), share, s.FullText())
	}
	return b.String()
}
