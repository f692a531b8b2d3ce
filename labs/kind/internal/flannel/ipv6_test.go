package flannel

import (
	"net/netip"
	"strings"
	"testing"
)

// TestWithIPv6 writes flannel's IPv6 settings into net-conf.json, for
// dual-stack and IPv6 alone, and Parse reads them back; the rest of the
// manifest is upstream's text unchanged.
func TestWithIPv6(t *testing.T) {
	v6 := netip.MustParsePrefix("fd00:10:244::/56")
	for _, tc := range []struct {
		name       string
		ipv4       bool
		addedLines int
	}{
		{"dual", true, 2},
		{"ipv6", false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := WithIPv6(Manifest(), v6, tc.ipv4)
			if err != nil {
				t.Fatal(err)
			}
			info, err := Parse(m)
			if err != nil {
				t.Fatal(err)
			}
			if !info.EnableIPv6 || info.IPv6Network != v6 || info.EnableIPv4 != tc.ipv4 || info.Network != netip.MustParsePrefix("10.244.0.0/16") {
				t.Errorf("Parse(WithIPv6): %+v", info)
			}
			if got, want := strings.Count(m, "\n")-strings.Count(Manifest(), "\n"), tc.addedLines; got != want {
				t.Errorf("%d lines added, want %d", got, want)
			}
			up, err := Upstream(m)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(up, `      "IPv6Network": "fd00:10:244::/56",`+"\n") {
				t.Errorf("the IPv6Network line is not in net-conf.json:\n%s", up)
			}
		})
	}
	if _, err := WithIPv6(Manifest(), netip.MustParsePrefix("10.1.0.0/16"), true); err == nil {
		t.Error("an IPv4 prefix as IPv6Network: want an error")
	}
	if _, err := WithIPv6("kind: ConfigMap\n", v6, true); err == nil || !strings.Contains(err.Error(), "found it 0 times") {
		t.Errorf("no Network line: got %v", err)
	}
	if DeviceIPv6(1) != "flannel-v6.1" {
		t.Errorf("DeviceIPv6(1) = %q", DeviceIPv6(1))
	}
}
