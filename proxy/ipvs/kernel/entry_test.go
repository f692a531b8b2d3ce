package kernel

import "testing"

func TestEntryRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		typ SetType
		s   string
	}{
		{HashIP, "10.96.0.10"},
		{HashIPPort, "10.96.0.10,udp:53"},
		{HashIPPort, "192.168.0.10,sctp:31868"},
		{HashIPPortIP, "10.244.1.5,tcp:8080,10.244.1.5"},
		{HashIPPortNet, "203.0.113.7,tcp:80,192.0.2.0/24"},
		{BitmapPort, "30080"},
		{HashIP, "fd00:10:96::a"},
		{HashIPPort, "fd00:10:96::a,udp:53"},
		{HashIPPortIP, "fd00:10:244:1::5,tcp:8080,fd00:10:244:1::5"},
		{HashIPPortNet, "2001:db8::7,tcp:80,2001:db8:1::/48"},
		{HashIPPortNet, "2001:db8::7,tcp:80,2001:db8:1::1"},
	} {
		e, err := ParseEntry(tc.typ, tc.s)
		if err != nil {
			t.Errorf("ParseEntry(%s, %q): %v", tc.typ, tc.s, err)
			continue
		}
		if got := e.Format(tc.typ); got != tc.s {
			t.Errorf("Format(ParseEntry(%s, %q)) = %q", tc.typ, tc.s, got)
		}
	}
}

func TestParseEntryNamesTheProblem(t *testing.T) {
	for _, tc := range []struct {
		typ       SetType
		s, reason string
	}{
		{HashIPPort, "10.96.0.10", "want 2 comma-separated parts"},
		{HashIPPort, "10.96.0.10,icmp:0", "unknown protocol icmp"},
		{HashIPPort, "fe80::1%eth0,tcp:80", "want an IPv4 or IPv6 address first"},
		{BitmapPort, "70000", "want a port number"},
		{HashIPPortNet, "10.0.0.1,tcp:80,nonsense", "want a CIDR of the first address's family third"},
		{HashIPPortNet, "10.0.0.1,tcp:80,fd00::/64", "want a CIDR of the first address's family third"},
		{HashIPPortIP, "fd00::1,tcp:80,10.0.0.1", "want an address of the first one's family third"},
	} {
		_, err := ParseEntry(tc.typ, tc.s)
		want := "ipset " + string(tc.typ) + " entry \"" + tc.s + "\": " + tc.reason
		if err == nil || err.Error() != want {
			t.Errorf("ParseEntry(%s, %q) = %v, want %q", tc.typ, tc.s, err, want)
		}
	}
}

func TestVirtualServerStrings(t *testing.T) {
	vs := VirtualServer{Address: mustAddr("10.96.0.10"), Protocol: UDP, Port: 53, Scheduler: "rr"}
	if got := vs.String(); got != "-A -u 10.96.0.10:53 -s rr" {
		t.Errorf("String() = %q", got)
	}
	if got := vs.Key(); got != "10.96.0.10:53/UDP" {
		t.Errorf("Key() = %q", got)
	}
	vs.Flags, vs.Timeout, vs.Scheduler = FlagPersistent|FlagSourceHash, 10800, "mh"
	if got := vs.Options(); got != "-s mh -p 10800 -b mh-port" {
		t.Errorf("Options() = %q", got)
	}
	rs := RealServer{Address: mustAddr("10.244.1.5"), Port: 53, Weight: 1}
	if got := rs.Describe(); got != "-r 10.244.1.5:53 -m -w 1" {
		t.Errorf("Describe() = %q", got)
	}
}

// TestVirtualServerStringsIPv6: ipvsadm -S -n brackets IPv6 addresses.
func TestVirtualServerStringsIPv6(t *testing.T) {
	vs := VirtualServer{Address: mustAddr("fd00:10:96::a"), Protocol: TCP, Port: 80, Scheduler: "rr"}
	if got := vs.String(); got != "-A -t [fd00:10:96::a]:80 -s rr" {
		t.Errorf("String() = %q", got)
	}
	if got := vs.Key(); got != "[fd00:10:96::a]:80/TCP" {
		t.Errorf("Key() = %q", got)
	}
	rs := RealServer{Address: mustAddr("fd00:10:244:1::5"), Port: 8080, Weight: 1}
	if got := rs.Describe(); got != "-r [fd00:10:244:1::5]:8080 -m -w 1" {
		t.Errorf("Describe() = %q", got)
	}
}
