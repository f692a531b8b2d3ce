package hostport

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseAddrPort(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"10.96.0.11:80", "10.96.0.11:80"},
		{"[fd00:10:96::a]:80", "[fd00:10:96::a]:80"},
		{"[::ffff:10.96.0.11]:80", "10.96.0.11:80"},
	} {
		got, err := ParseAddrPort(c.in)
		if err != nil || got != netip.MustParseAddrPort(c.want) {
			t.Errorf("ParseAddrPort(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}

// TestErrorsSayWhatToWrite: each malformed value's error names the form
// that works.
func TestErrorsSayWhatToWrite(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"fd00:10:96::a", "fd00:10:96::a is an IPv6 address without a port: want [fd00:10:96::a]:PORT"},
		{"fd00:10:96::a:80", "fd00:10:96::a:80 is an IPv6 address without a port: want [fd00:10:96::a:80]:PORT, or [fd00:10:96::a]:80 if 80 is the port"},
		{"fd00:10:96:1:2:3:4:5:80", "an IPv6 address is written in brackets before its port: want [fd00:10:96:1:2:3:4:5]:80"},
		{"fd00::zz:80", "want [IPv6]:PORT"},
		{"10.96.0.11", "10.96.0.11 has no port: want 10.96.0.11:PORT"},
		{"10.96.0.11:0", `port "0": want 1..65535`},
		{"10.96.0.11:http", `port "http": want 1..65535`},
		{"[fd00::zz]:80", `"fd00::zz" in brackets is not an IPv6 address`},
		{"", "want IP:PORT, or [IPv6]:PORT"},
	} {
		_, err := ParseAddrPort(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseAddrPort(%q) error %v, want one containing %q", c.in, err, c.want)
		}
	}
	if _, err := ParseAddrPort("web:80"); err == nil || !strings.Contains(err.Error(), "not an IP address") {
		t.Errorf("ParseAddrPort(web:80) error %v, want: not an IP address", err)
	}
	if host, port, err := Split("web.default:80"); err != nil || host != "web.default" || port != "80" {
		t.Errorf("Split(web.default:80) = %q %q %v: a name is a host", host, port, err)
	}
}
