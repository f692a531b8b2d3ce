package labsize

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseNodeCounts reads --nodes: a comma-separated list of numbers of
// nodes, each 1…MaxNodes, returned ascending without repeats (so that
// each size's memory estimates the next).
func ParseNodeCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > MaxNodes {
			return nil, fmt.Errorf("--nodes: %q: want a number of nodes from 1 to %d", f, MaxNodes)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}
