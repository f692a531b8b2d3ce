// Package hostport reads the HOST:PORT values svclab's flags take (--to of
// traffic and trace) in both IP families, with an error that says what
// is wrong when net.SplitHostPort's would not: an IPv6 address is written
// in brackets before its port ([fd00:10:96::a]:80), and a bare IPv6
// address, or one whose port is glued on without brackets
// (fd00:10:96::a:80), is ambiguous.
package hostport

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Split is net.SplitHostPort with errors a reader can act on: a missing
// port, an IPv6 address without brackets (naming the bracketed form), a
// port that is not 1..65535. The host may be a name.
func Split(s string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(s)
	if err != nil {
		return "", "", explain(s)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("port %q: want 1..65535", port)
	}
	if strings.Contains(host, ":") {
		if _, err := netip.ParseAddr(host); err != nil {
			return "", "", fmt.Errorf("%q in brackets is not an IPv6 address", host)
		}
	}
	return host, port, nil
}

// ParseAddrPort is Split for an IP address (either family) and a port.
func ParseAddrPort(s string) (netip.AddrPort, error) {
	host, port, err := Split(s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return netip.AddrPort{}, fmt.Errorf("%q is not an IP address: want IP:PORT, or [IPv6]:PORT", host)
	}
	n, _ := strconv.Atoi(port)
	return netip.AddrPortFrom(ip.Unmap(), uint16(n)), nil
}

// explain says why s is not HOST:PORT.
func explain(s string) error {
	if ip, err := netip.ParseAddr(s); err == nil {
		if ip.Is6() {
			if prefix, port, ok := gluedPort(s); ok {
				return fmt.Errorf("%s is an IPv6 address without a port: want [%s]:PORT, or [%s]:%s if %s is the port", s, s, prefix, port, port)
			}
			return fmt.Errorf("%s is an IPv6 address without a port: want [%s]:PORT", s, s)
		}
		return fmt.Errorf("%s has no port: want %s:PORT", s, s)
	}
	if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
		if prefix, port, ok := gluedPort(s); ok {
			return fmt.Errorf("an IPv6 address is written in brackets before its port: want [%s]:%s", prefix, port)
		}
		return errors.New("an IPv6 address is written in brackets before its port: want [IPv6]:PORT")
	}
	return errors.New("want IP:PORT, or [IPv6]:PORT")
}

// gluedPort reads s as an IPv6 address with ":PORT" glued on: the
// address before the last colon and the decimal port after it.
func gluedPort(s string) (addr, port string, ok bool) {
	i := strings.LastIndex(s, ":")
	if i <= 0 {
		return "", "", false
	}
	ip, err := netip.ParseAddr(s[:i])
	n, perr := strconv.Atoi(s[i+1:])
	if err != nil || !ip.Is6() || perr != nil || n < 1 || n > 65535 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}
