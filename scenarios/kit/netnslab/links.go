package netnslab

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// LinkStats returns the packet counters of a device in a lab host, read over
// netlink (what `ip -s link show DEV` prints).
func (l *Lab) LinkStats(host, device string) (*netlink.LinkStatistics, error) {
	ns, err := l.Namespace(host)
	if err != nil {
		return nil, err
	}
	h, err := netns.GetFromName(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		return nil, err
	}
	defer nl.Close()
	link, err := nl.LinkByName(device)
	if err != nil {
		return nil, fmt.Errorf("%s in %s: %w", device, host, err)
	}
	return link.Attrs().Statistics, nil
}
