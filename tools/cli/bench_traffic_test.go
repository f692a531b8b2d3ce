package cli

import (
	"strings"
	"testing"
)

// TestBenchTrafficRefusesBadFlags checks that bad input fails at once,
// with one error naming the flag, before any lab is built.
func TestBenchTrafficRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--modes", "iptables,userspace"}, `--modes: "userspace": unknown mode`},
		{[]string{"--parallelism", "1,0"}, `--parallelism: "0": want a number of connections at once from 1 to 64`},
		{[]string{"--modes", "iptables", "-o", "yaml"}, `-o "yaml": want table or json`},
		{[]string{"--modes", "iptables", "--connections", "-1"}, `--connections -1: want 1 to 100000`},
		{[]string{"--modes", "iptables", "--services", "-1"}, `--services -1: want 1 to 50000`},
		{[]string{"--modes", "iptables", "--repetitions", "21"}, `--repetitions 21: want 1 to 20`},
		{[]string{"--modes", "iptables", "--run-deadline", "-1s"}, `must not be negative`},
	} {
		_, err := run(append([]string{"bench", "traffic"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
