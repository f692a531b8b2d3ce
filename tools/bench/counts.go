package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxServices bounds one number of Services: the generated Services take
// their cluster IPs from 10.96.16.0 up, below the /16's broadcast address.
const MaxServices = 50000

// ParseServiceCounts reads --services: a comma-separated list of numbers
// of Services, each 1…MaxServices, returned ascending without repeats.
func ParseServiceCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > MaxServices {
			return nil, fmt.Errorf("--services: %q: want a number of Services from 1 to %d", f, MaxServices)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}
