package kit

import (
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Flow is one conntrack entry, its two tuples as netip values.
type Flow struct {
	Proto              uint8
	OrigSrc, OrigDst   netip.AddrPort
	ReplySrc, ReplyDst netip.AddrPort
}

// Conntrack reads the conntrack table of a lab host over netlink (what
// `conntrack -L` shows, without running conntrack).
func (l *Lab) Conntrack(host string) ([]Flow, error) {
	ns, err := l.Namespace(host)
	if err != nil {
		return nil, err
	}
	h, err := netns.GetFromName(ns)
	if err != nil {
		return nil, fmt.Errorf("conntrack in %s: %w", host, err)
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		return nil, fmt.Errorf("conntrack in %s: %w", host, err)
	}
	defer nl.Close()
	flows, err := nl.ConntrackTableList(netlink.ConntrackTable, unix.AF_INET)
	if err != nil {
		return nil, fmt.Errorf("conntrack in %s: %w", host, err)
	}
	out := make([]Flow, 0, len(flows))
	for _, f := range flows {
		out = append(out, Flow{
			Proto:    f.Forward.Protocol,
			OrigSrc:  addrPort(f.Forward.SrcIP, f.Forward.SrcPort),
			OrigDst:  addrPort(f.Forward.DstIP, f.Forward.DstPort),
			ReplySrc: addrPort(f.Reverse.SrcIP, f.Reverse.SrcPort),
			ReplyDst: addrPort(f.Reverse.DstIP, f.Reverse.DstPort),
		})
	}
	return out, nil
}

func addrPort(ip []byte, port uint16) netip.AddrPort {
	a, _ := netip.AddrFromSlice(ip)
	return netip.AddrPortFrom(a.Unmap(), port)
}
