package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Set sizes, as upstream's ipset defaults (setIPSetDefaults).
const (
	setMaxElem   = 65536
	setPortFrom  = 0
	setPortTo    = 65535
	ipsetErrBase = 4096
)

func isIPSetError(err error, code int) bool {
	var ie nl.IPSetError
	return errors.As(err, &ie) && int(ie) == code
}

// ListSets implements IPSets.
func (k *Netlink) ListSets() ([]SetInfo, error) {
	results, err := k.nl.IpsetListAll()
	if err != nil {
		return nil, fmt.Errorf("ipset list -n: %w", err)
	}
	var out []SetInfo
	for _, r := range results {
		// A big set is dumped in several messages, each carrying its name.
		if r.SetName == "" || slices.ContainsFunc(out, func(s SetInfo) bool { return s.Name == r.SetName }) {
			continue
		}
		out = append(out, SetInfo{Name: r.SetName, Type: SetType(r.TypeName)})
	}
	return out, nil
}

// CreateSet implements IPSets. The set gets vishvananda/netlink's default
// revision of its type (the oldest one with the features used), where the
// ipset command would pick the newest: newer revisions add header fields
// (bucketsize, initval) that the library does not parse and logs about on
// every listing. Members and matching are the same.
func (k *Netlink) CreateSet(name string, typ SetType, family Family) error {
	what := fmt.Sprintf("ipset create %s %s", name, typ)
	opts := netlink.IpsetCreateOptions{Family: unix.AF_INET, MaxElements: setMaxElem}
	if family.OrInet() == Inet6 {
		opts.Family = unix.AF_INET6
	}
	if typ == BitmapPort {
		what += " range 0-65535"
		opts = netlink.IpsetCreateOptions{PortFrom: setPortFrom, PortTo: setPortTo}
	} else {
		what += " family " + string(family.OrInet()) + " hashsize 1024 maxelem 65536"
	}
	err := k.nl.IpsetCreate(name, string(typ), opts)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EEXIST) {
		have, _, exists, lerr := k.Entries(name)
		if lerr == nil && exists && have == typ {
			return nil // -exist
		}
		if lerr == nil && exists {
			return fmt.Errorf("%s: a set of that name exists with type %s", what, have)
		}
	}
	if isIPSetError(err, nl.IPSET_ERR_FIND_TYPE) || errors.Is(err, unix.EPROTONOSUPPORT) {
		return fmt.Errorf("%s: the kernel has no ipset type %s (CONFIG_IP_SET_%s): %w", what, typ, kconfigName(typ), err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func kconfigName(typ SetType) string {
	return map[SetType]string{HashIP: "HASH_IP", HashIPPort: "HASH_IPPORT", HashIPPortIP: "HASH_IPPORTIP",
		HashIPPortNet: "HASH_IPPORTNET", BitmapPort: "BITMAP_PORT"}[typ]
}

// Entries implements IPSets.
func (k *Netlink) Entries(name string) (SetType, []string, bool, error) {
	r, err := k.nl.IpsetList(name)
	if errors.Is(err, unix.ENOENT) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("ipset list %s: %w", name, err)
	}
	typ := SetType(r.TypeName)
	out := make([]string, 0, len(r.Entries))
	for _, e := range r.Entries {
		out = append(out, fromNetlinkEntry(e).Format(typ))
	}
	slices.Sort(out)
	return typ, slices.Compact(out), true, nil
}

func fromNetlinkEntry(e netlink.IPSetEntry) Entry {
	var out Entry
	if ip, ok := netip.AddrFromSlice(e.IP); ok {
		out.IP = ip.Unmap()
	}
	if e.Port != nil {
		out.Port = *e.Port
	}
	if e.Protocol != nil {
		out.Protocol = ProtocolFromNumber(*e.Protocol)
	}
	if ip2, ok := netip.AddrFromSlice(e.IP2); ok {
		out.IP2 = ip2.Unmap()
		if e.CIDR2 != 0 {
			out.Net = netip.PrefixFrom(out.IP2, int(e.CIDR2))
		} else {
			out.Net = netip.PrefixFrom(out.IP2, out.IP2.BitLen())
		}
	}
	return out
}

func toNetlinkEntry(typ SetType, e Entry) *netlink.IPSetEntry {
	port := e.Port
	proto := e.Protocol.Number()
	// Replace: without NLM_F_EXCL, adding an existing member or deleting a
	// missing one is not an error (the ipset command's -exist).
	out := &netlink.IPSetEntry{IP: net.IP(e.IP.AsSlice()), Replace: true}
	if typ != HashIP {
		out.Port, out.Protocol = &port, &proto
	}
	switch typ {
	case HashIPPortIP:
		out.IP2 = net.IP(e.IP2.AsSlice())
	case HashIPPortNet:
		out.IP2 = net.IP(e.Net.Addr().AsSlice())
		out.CIDR2 = uint8(e.Net.Bits())
	}
	return out
}

// AddEntry implements IPSets.
func (k *Netlink) AddEntry(name string, typ SetType, entry string) error {
	return k.addDel(nl.IPSET_CMD_ADD, "add", name, typ, entry)
}

// DelEntry implements IPSets.
func (k *Netlink) DelEntry(name string, typ SetType, entry string) error {
	return k.addDel(nl.IPSET_CMD_DEL, "del", name, typ, entry)
}

func (k *Netlink) addDel(cmd int, verb, name string, typ SetType, entry string) error {
	what := fmt.Sprintf("ipset %s %s %s", verb, name, entry)
	e, err := ParseEntry(typ, entry)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	switch {
	case typ == BitmapPort:
		err = k.bitmapPort(cmd, name, e.Port)
	case cmd == nl.IPSET_CMD_ADD:
		err = k.nl.IpsetAdd(name, toNetlinkEntry(typ, e))
	default:
		err = k.nl.IpsetDel(name, toNetlinkEntry(typ, e))
	}
	if err != nil && !(cmd == nl.IPSET_CMD_DEL && isIPSetError(err, nl.IPSET_ERR_EXIST)) {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("%s: the set does not exist", what)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// bitmapPort adds or deletes a port of a bitmap:port set. The request is
// built here because vishvananda/netlink always adds a protocol attribute
// to a port, which bitmap:port refuses ("invalid protocol"). It carries no
// NLM_F_EXCL: adding a present port or deleting a missing one succeeds.
func (k *Netlink) bitmapPort(cmd int, set string, port uint16) error {
	req := nl.NewNetlinkRequest(cmd|(unix.NFNL_SUBSYS_IPSET<<8), nl.GetIpsetFlags(cmd))
	req.Sockets = k.raw
	req.AddData(&nl.Nfgenmsg{NfgenFamily: unix.AF_INET, Version: nl.NFNETLINK_V0})
	req.AddData(nl.NewRtAttr(nl.IPSET_ATTR_PROTOCOL, nl.Uint8Attr(nl.IPSET_PROTOCOL)))
	req.AddData(nl.NewRtAttr(nl.IPSET_ATTR_SETNAME, nl.ZeroTerminated(set)))
	data := nl.NewRtAttr(nl.IPSET_ATTR_DATA|int(nl.NLA_F_NESTED), nil)
	data.AddChild(nl.NewRtAttr(nl.IPSET_ATTR_PORT|int(nl.NLA_F_NET_BYTEORDER), binary.BigEndian.AppendUint16(nil, port)))
	req.AddData(data)
	_, err := req.Execute(unix.NETLINK_NETFILTER, 0)
	if errno, ok := err.(unix.Errno); ok && int(errno) >= ipsetErrBase {
		err = nl.IPSetError(uintptr(errno))
	}
	return err
}

// DestroySet implements IPSets.
func (k *Netlink) DestroySet(name string) error {
	err := k.nl.IpsetDestroy(name)
	switch {
	case err == nil, errors.Is(err, unix.ENOENT):
		return nil
	case isIPSetError(err, nl.IPSET_ERR_REFERENCED):
		return fmt.Errorf("ipset destroy %s: the set is still used by an iptables rule", name)
	}
	return fmt.Errorf("ipset destroy %s: %w", name, err)
}
