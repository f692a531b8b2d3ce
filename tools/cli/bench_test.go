package cli

import (
	"strings"
	"testing"
)

// TestBenchDataplaneRefusesBadFlags checks that bad input fails at once,
// with one error naming the flag, before any lab is built.
func TestBenchDataplaneRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--services", "100,0"}, `--services: "0": want a number of Services from 1 to 50000`},
		{[]string{"--modes", "iptables,userspace"}, `--modes: "userspace": unknown mode`},
		{[]string{"--services", "10", "--modes", "iptables", "-o", "yaml"}, `-o "yaml": want table or json`},
		{[]string{"--services", "10", "--modes", "iptables", "--connections", "-1"}, `--connections -1: want 1 to 100000`},
	} {
		_, err := run(append([]string{"bench", "dataplane"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
