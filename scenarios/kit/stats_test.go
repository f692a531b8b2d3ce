package kit

import (
	"strings"
	"testing"

	"github.com/onsi/gomega"
)

// failures runs f with gomega's global fail handler recording the messages.
func failures(t *testing.T, f func()) []string {
	t.Helper()
	var msgs []string
	gomega.RegisterFailHandler(func(message string, _ ...int) { msgs = append(msgs, message) })
	defer gomega.RegisterFailHandler(nil)
	f()
	return msgs
}

func TestSampleSize(t *testing.T) {
	// The numbers kit's statistics comment states.
	if got := failures(t, func() {
		if n := SampleSize(0.6, 0.4); n != 2748 {
			t.Errorf("SampleSize(60/40) = %d, want 2748", n)
		}
		if n := SampleSize(0.4, 0.3, 0.3); n != 5791 {
			t.Errorf("SampleSize(40/30/30) = %d, want 5791", n)
		}
	}); len(got) > 0 {
		t.Errorf("SampleSize failed: %v", got)
	}
}

func TestExpectUniformAndShares(t *testing.T) {
	pass := failures(t, func() {
		ExpectUniform("even", []float64{1374, 1374})
		ExpectUniform("three", []float64{1930, 1931, 1930})
		ExpectShares("a third", []float64{1000, 2000}, []float64{1.0 / 3, 2.0 / 3})
	})
	if len(pass) > 0 {
		t.Errorf("fair splits failed: %v", pass)
	}
	// 60/40 of 2748: statistic 109.9 on 1 dof, p ≈ 1e-25.
	fail := failures(t, func() {
		ExpectUniform("skewed", []float64{1649, 1099})
		ExpectShares("not a third", []float64{1500, 1500}, []float64{1.0 / 3, 2.0 / 3})
	})
	if len(fail) != 2 ||
		!strings.Contains(fail[0], "skewed: counts [1649 1099] are not a uniform split (chi-square p-value") ||
		!strings.Contains(fail[0], "< alpha 1e-08)") ||
		!strings.Contains(fail[1], "not a third: counts [1500 1500] do not fit shares [0.3333333333333333 0.6666666666666666]") {
		t.Errorf("skewed splits: failures %q", fail)
	}
}
