package conntrack

import (
	"fmt"
	"syscall"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ipctnlMsgCtGet asks ctnetlink for entries (with NLM_F_DUMP: all of them).
const ipctnlMsgCtGet = 1

// Dump returns every entry of the conntrack table of the named network
// namespace (as in /run/netns), like `ip netns exec NAME conntrack -L`:
// the IPv4 entries (family inet), then the IPv6 ones (inet6, `conntrack
// -L -f ipv6`).
func Dump(namespace string) ([]Flow, error) {
	h, err := netns.GetFromName(namespace)
	if err != nil {
		return nil, fmt.Errorf("conntrack in %s: %w", namespace, err)
	}
	defer h.Close()
	return dumpAt(h, namespace)
}

// DumpHere is Dump for the calling process's own network namespace (a
// hostNetwork pod reads its node's table).
func DumpHere() ([]Flow, error) { return dumpAt(netns.None(), "this namespace") }

// families are the address families dumped, in this order.
var families = []uint8{unix.AF_INET, unix.AF_INET6}

// dumpAt dumps each of families in turn.
func dumpAt(h netns.NsHandle, namespace string) ([]Flow, error) {
	var all []Flow
	for _, family := range families {
		flows, err := dumpFamily(h, namespace, family)
		if err != nil {
			return nil, err
		}
		all = append(all, flows...)
	}
	return all, nil
}

// dumpFamily asks ctnetlink for the entries of one address family (the
// kernel leaves out the other family's).
func dumpFamily(h netns.NsHandle, namespace string, family uint8) ([]Flow, error) {
	sock, err := nl.GetNetlinkSocketAt(h, netns.None(), unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, fmt.Errorf("conntrack in %s: netlink socket: %w", namespace, err)
	}
	defer sock.Close()
	req := nl.NewNetlinkRequest(unix.NFNL_SUBSYS_CTNETLINK<<8|ipctnlMsgCtGet, unix.NLM_F_DUMP)
	req.AddData(&nl.Nfgenmsg{NfgenFamily: family, Version: nl.NFNETLINK_V0})
	if err := sock.Send(req); err != nil {
		return nil, fmt.Errorf("conntrack in %s: %w", namespace, err)
	}
	var flows []Flow
	for {
		msgs, _, err := sock.Receive()
		if err != nil {
			return nil, fmt.Errorf("conntrack in %s: %w", namespace, err)
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return flows, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if errno := -int32(nl.NativeEndian().Uint32(m.Data[:4])); errno != 0 {
						return nil, fmt.Errorf("conntrack in %s: %w", namespace, syscall.Errno(errno))
					}
				}
				return flows, nil
			}
			f, err := parseFlow(m.Data)
			if err != nil {
				return nil, fmt.Errorf("conntrack in %s: %w", namespace, err)
			}
			flows = append(flows, f)
		}
	}
}
