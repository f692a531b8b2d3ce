package ui

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// DefaultListen is where `svclab ui` listens unless told otherwise.
const DefaultListen = "127.0.0.1:8470"

// CheckListen accepts only 127.0.0.1:PORT (PORT 0 picks a free one): the
// page can change a lab (it sends traffic) and svclab runs as root, so it
// is never reachable from another machine, nor through a name that DNS
// could point elsewhere.
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: want 127.0.0.1:PORT: %w", addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip != netip.MustParseAddr("127.0.0.1") {
		return fmt.Errorf("listen address %q: svclab ui listens on 127.0.0.1 only (it runs as root and can send traffic in the lab)", addr)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || strconv.FormatUint(n, 10) != port {
		return fmt.Errorf("listen address %q: port %q: want a number 0..65535", addr, port)
	}
	return nil
}
