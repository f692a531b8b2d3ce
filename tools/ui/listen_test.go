package ui

import (
	"strings"
	"testing"
)

// TestCheckListenRefusesAllButLoopback: only 127.0.0.1:PORT is accepted;
// every other address — the wildcard, another interface, IPv6, a name that
// DNS resolves — is refused with one error saying why.
func TestCheckListenRefusesAllButLoopback(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:8470", "127.0.0.1:0", "127.0.0.1:65535"} {
		if err := CheckListen(ok); err != nil {
			t.Errorf("CheckListen(%q): %v", ok, err)
		}
	}
	for addr, want := range map[string]string{
		"0.0.0.0:8470":         "127.0.0.1 only",
		":8470":                "127.0.0.1 only",
		"192.168.1.5:8470":     "127.0.0.1 only",
		"127.0.0.2:8470":       "127.0.0.1 only",
		"[::1]:8470":           "127.0.0.1 only",
		"[::]:8470":            "127.0.0.1 only",
		"localhost:8470":       "127.0.0.1 only",
		"evil.example:8470":    "127.0.0.1 only",
		"[::ffff:127.0.0.1]:1": "127.0.0.1 only",
		"127.0.0.1":            "want 127.0.0.1:PORT",
		"127.0.0.1:http":       "want a number",
		"127.0.0.1:65536":      "want a number",
		"127.0.0.1:-1":         "want a number",
		"127.0.0.1:08470":      "want a number",
	} {
		err := CheckListen(addr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckListen(%q) = %v, want an error containing %q", addr, err, want)
		}
	}
}
