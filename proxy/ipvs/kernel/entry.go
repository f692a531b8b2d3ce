package kernel

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Entry is one ipset member taken apart. Which fields are used depends on
// the set type; see ParseEntry. Upstream: utilipset.Entry.
type Entry struct {
	IP       netip.Addr
	Protocol Protocol
	Port     uint16
	IP2      netip.Addr
	Net      netip.Prefix
}

// ParseEntry reads a member in the ipset command's syntax for typ:
//
//	hash:ip           10.96.0.10
//	hash:ip,port      10.96.0.10,udp:53
//	hash:ip,port,ip   10.244.1.5,tcp:8080,10.244.1.5
//	hash:ip,port,net  203.0.113.7,tcp:80,192.0.2.0/24
//	bitmap:port       30080
//
// The addresses of one member are all IPv4 or all IPv6 (an inet6 set's:
// fd00:10:96::a,udp:53).
func ParseEntry(typ SetType, s string) (Entry, error) {
	var e Entry
	fail := func(why string) (Entry, error) {
		return Entry{}, fmt.Errorf("ipset %s entry %q: %s", typ, s, why)
	}
	if typ == BitmapPort {
		p, err := strconv.ParseUint(s, 10, 16)
		if err != nil {
			return fail("want a port number")
		}
		e.Port = uint16(p)
		return e, nil
	}
	parts := strings.Split(s, ",")
	want := map[SetType]int{HashIP: 1, HashIPPort: 2, HashIPPortIP: 3, HashIPPortNet: 3}[typ]
	if want == 0 {
		return fail("unknown set type")
	}
	if len(parts) != want {
		return fail(fmt.Sprintf("want %d comma-separated parts", want))
	}
	ip, err := netip.ParseAddr(parts[0])
	if err != nil || ip.Zone() != "" || ip.Is4In6() {
		return fail("want an IPv4 or IPv6 address first")
	}
	e.IP = ip
	if want == 1 {
		return e, nil
	}
	proto, port, ok := strings.Cut(parts[1], ":")
	if !ok {
		return fail("want proto:port second")
	}
	e.Protocol = Protocol(strings.ToUpper(proto))
	if e.Protocol.Number() == 0 {
		return fail("unknown protocol " + proto)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fail("bad port " + port)
	}
	e.Port = uint16(p)
	switch typ {
	case HashIPPortIP:
		ip2, err := netip.ParseAddr(parts[2])
		if err != nil || ip2.Is4() != ip.Is4() || ip2.Zone() != "" || ip2.Is4In6() {
			return fail("want an address of the first one's family third")
		}
		e.IP2 = ip2
	case HashIPPortNet:
		n, err := netip.ParsePrefix(parts[2])
		if a, aerr := netip.ParseAddr(parts[2]); aerr == nil {
			n, err = netip.PrefixFrom(a, a.BitLen()), nil // as Format writes a single address
		}
		if err != nil || n.Addr().Is4() != ip.Is4() || n.Addr().Is4In6() {
			return fail("want a CIDR of the first address's family third")
		}
		e.Net = n.Masked()
	}
	return e, nil
}

// Format writes the member in the ipset command's syntax for typ (the
// inverse of ParseEntry). A hash:ip,port,net entry whose network is a
// single address is written without /32 (or /128), as `ipset list` does.
func (e Entry) Format(typ SetType) string {
	ipPort := func() string {
		return e.IP.String() + "," + e.Protocol.Lower() + ":" + strconv.Itoa(int(e.Port))
	}
	switch typ {
	case BitmapPort:
		return strconv.Itoa(int(e.Port))
	case HashIP:
		return e.IP.String()
	case HashIPPort:
		return ipPort()
	case HashIPPortIP:
		return ipPort() + "," + e.IP2.String()
	case HashIPPortNet:
		if e.Net.Bits() == e.Net.Addr().BitLen() {
			return ipPort() + "," + e.Net.Addr().String()
		}
		return ipPort() + "," + e.Net.String()
	}
	return ""
}
