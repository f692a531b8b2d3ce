package golden

import (
	"fmt"
	"strings"
)

// LineDiff tells how got differs from want, line by line: the first line
// that differs, then each line only want has ("- ") and each line only
// got has ("+ "), in their own order and counting repeats. It is "" when
// the two are equal.
func LineDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	i := firstDifference(w, g)
	fmt.Fprintf(&b, "first difference at line %d:\n- %s\n+ %s\n", i+1, lineAt(w, i), lineAt(g, i))
	missing, extra := linesOnlyIn(w, g), linesOnlyIn(g, w)
	for _, l := range missing {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range extra {
		b.WriteString("+ " + l + "\n")
	}
	if len(missing) == 0 && len(extra) == 0 {
		b.WriteString("(the same lines in another order)\n")
	}
	return b.String()
}

// firstDifference is the index of the first line where a and b differ
// (one of them may have ended there).
func firstDifference(a, b []string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// lineAt is line i of lines, or "" past the end.
func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// linesOnlyIn lists the lines of a, in order, that b does not have: a line
// a has twice and b once is listed once.
func linesOnlyIn(a, b []string) []string {
	left := map[string]int{}
	for _, l := range b {
		left[l]++
	}
	var only []string
	for _, l := range a {
		if left[l] > 0 {
			left[l]--
			continue
		}
		only = append(only, l)
	}
	return only
}
