package cli

import (
	"strings"
	"testing"
)

// TestTraceRefusesBadInput: each bad flag is one clear error naming the
// flag, before any lab is opened.
func TestTraceRefusesBadInput(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trace", "--from", "client", "--to", "10.0.0.1:80", "-o", "png"}, `-o: format "png": want one of text, json, svg`},
		{[]string{"trace", "--to", "10.0.0.1:80"}, "--from: required"},
		{[]string{"trace", "--from", "client", "--to", "10.0.0.1"}, `--to "10.0.0.1": 10.0.0.1 has no port: want 10.0.0.1:PORT`},
		{[]string{"trace", "--from", "client", "--to", "fd00:10:96::a"}, `--to "fd00:10:96::a": fd00:10:96::a is an IPv6 address without a port: want [fd00:10:96::a]:PORT`},
		{[]string{"trace", "--from", "client", "--to", "web:80"}, `--to "web:80": "web" is not an IP address`},
		{[]string{"trace", "--lab", "nosuch", "--from", "client", "--to", "[fd00:10:96::a]:80"}, `lab "nosuch": not found`},
		{[]string{"trace", "--from", "client", "--to", "10.0.0.1:80", "--proto", "sctp"}, `--proto "sctp": want tcp or udp`},
		{[]string{"trace", "--lab", "nosuch", "--from", "client", "--to", "10.0.0.1:80"}, `lab "nosuch": not found`},
	} {
		_, err := run(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
