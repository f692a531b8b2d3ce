package nftables

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/internal/nldump"
)

// newTableMsg is the type of the kernel's answer to a table dump.
const newTableMsg = unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWTABLE

// familyNames are the nftables families by their number in nfgenmsg.
var familyNames = map[uint8]knftables.Family{
	unix.NFPROTO_IPV4:   knftables.IPv4Family,
	unix.NFPROTO_IPV6:   knftables.IPv6Family,
	unix.NFPROTO_INET:   knftables.InetFamily,
	unix.NFPROTO_ARP:    knftables.ARPFamily,
	unix.NFPROTO_BRIDGE: knftables.BridgeFamily,
	unix.NFPROTO_NETDEV: knftables.NetDevFamily,
}

// familiesWithTable lists the families that hold a table named name in
// the calling thread's network namespace, sorted, by one netlink dump of
// the namespace's tables (NFT_MSG_GETTABLE, what `nft list tables` reads)
// instead of an nft exec per family: a proxy starting in iptables or ipvs
// mode asks it to learn that there is no nftables table to remove, which
// costs upstream's knftables six nft execs. An error (no nf_tables in the
// kernel) tells the caller to ask nft instead.
func familiesWithTable(name string) ([]knftables.Family, error) {
	msgs, err := nldump.Retry(func() ([][]byte, error) {
		req := nl.NewNetlinkRequest(unix.NFNL_SUBSYS_NFTABLES<<8|unix.NFT_MSG_GETTABLE, unix.NLM_F_DUMP)
		req.AddData(&nl.Nfgenmsg{NfgenFamily: unix.NFPROTO_UNSPEC, Version: nl.NFNETLINK_V0})
		return req.Execute(unix.NETLINK_NETFILTER, newTableMsg)
	})
	if err != nil {
		return nil, fmt.Errorf("listing the nftables tables over netlink: %w", err)
	}
	var found []knftables.Family
	for _, m := range msgs {
		family, table, err := parseTableMsg(m)
		if err != nil {
			return nil, err
		}
		if f, ok := familyNames[family]; ok && table == name && !slices.Contains(found, f) {
			found = append(found, f)
		}
	}
	slices.Sort(found)
	return found, nil
}

// parseTableMsg reads a table's family and name from the payload of an
// NFT_MSG_NEWTABLE message: an nfgenmsg, then the table's attributes, each
// a host-endian length and type, the value, padding to 4 bytes. It checks
// every length itself (nl.ParseRouteAttr slices past the end of a
// malformed buffer and panics).
func parseTableMsg(m []byte) (family uint8, name string, err error) {
	if len(m) < nl.SizeofNfgenmsg {
		return 0, "", fmt.Errorf("nftables table message of %d bytes", len(m))
	}
	for b := m[nl.SizeofNfgenmsg:]; len(b) > 0; {
		if len(b) < unix.SizeofNlAttr {
			return 0, "", fmt.Errorf("nftables table message: %d bytes after its last attribute", len(b))
		}
		n, typ := int(binary.NativeEndian.Uint16(b)), binary.NativeEndian.Uint16(b[2:])
		if n < unix.SizeofNlAttr || n > len(b) {
			return 0, "", fmt.Errorf("nftables table message: attribute of length %d in %d bytes", n, len(b))
		}
		if typ&^(unix.NLA_F_NESTED|unix.NLA_F_NET_BYTEORDER) == unix.NFTA_TABLE_NAME {
			name = string(bytes.TrimRight(b[unix.SizeofNlAttr:n], "\x00"))
		}
		b = b[min(len(b), (n+unix.NLA_ALIGNTO-1)&^(unix.NLA_ALIGNTO-1)):]
	}
	return m[0], name, nil
}

// familiesToClean are the families of Families whose kube-proxy table
// the kernel holds, or all of Families when the kernel cannot be asked.
func familiesToClean() []knftables.Family {
	found, err := familiesWithTable(TableName)
	if err != nil {
		return Families
	}
	var clean []knftables.Family
	for _, f := range Families {
		if slices.Contains(found, f) {
			clean = append(clean, f)
		}
	}
	return clean
}
