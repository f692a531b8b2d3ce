package upstream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/proxy/nftables"
)

// nftablesCheck reads the kube-proxy table over netlink, as `nft list
// chain` and `nft get element` would but without nft's cache fill (nft
// 1.0.6 reads every chain and set of the table first: seconds at
// 10k×10, which would drown the sync being timed): the rules of one
// service chain and the elements of the anonymous maps they look up, or
// one element of the service-ips map. An nf_tables transaction is atomic,
// so one part of the change being there means all of it is.
type nftablesCheck struct{}

func (nftablesCheck) endpoint(sl *discoveryv1.EndpointSlice) error {
	ip := sl.Endpoints[0].Addresses[0]
	chain := "service-" + nftHashAndTruncate(fmt.Sprintf("%s/%s/%s/%s",
		sl.Namespace, sl.Labels[discoveryv1.LabelServiceName], benchProtocol, benchPortName))
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return err
	}
	port, _ := strconv.ParseUint(benchTargetPort, 10, 16)
	// Upstream v1.36.4 jumps to a chain per endpoint, named "…__IP/PORT",
	// from its service chain's vmap; svclab DNATs to "IP . PORT" from the
	// service chain's map (as upstream's master does).
	wants := [][]byte{[]byte("__" + ip + "/" + benchTargetPort + "\x00"), binary.BigEndian.AppendUint16(addr.AsSlice(), uint16(port))}
	rules, err := nftRequest(unix.NFT_MSG_GETRULE, unix.NLM_F_DUMP,
		nl.NewRtAttr(unix.NFTA_RULE_TABLE, nl.ZeroTerminated(nftables.TableName)),
		nl.NewRtAttr(unix.NFTA_RULE_CHAIN, nl.ZeroTerminated(chain)))
	if err != nil {
		return fmt.Errorf("not in the kernel: rules of chain %s: %w", chain, err)
	}
	for _, set := range lookedUpSets(rules) {
		elems, err := nftRequest(unix.NFT_MSG_GETSETELEM, unix.NLM_F_DUMP,
			nl.NewRtAttr(unix.NFTA_SET_ELEM_LIST_TABLE, nl.ZeroTerminated(nftables.TableName)),
			nl.NewRtAttr(unix.NFTA_SET_ELEM_LIST_SET, nl.ZeroTerminated(set)))
		if err != nil {
			return fmt.Errorf("not in the kernel: elements of %s (chain %s): %w", set, chain, err)
		}
		for _, m := range elems {
			for _, want := range wants {
				if bytes.Contains(m, want) {
					return nil
				}
			}
		}
	}
	return fmt.Errorf("not in the kernel: chain %s leads nowhere to %s:%s", chain, ip, benchTargetPort)
}

func (nftablesCheck) service(svc *corev1.Service) error {
	addr, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil {
		return err
	}
	key := append(addr.AsSlice(), unix.IPPROTO_TCP, 0, 0, 0)
	key = append(binary.BigEndian.AppendUint16(key, uint16(svc.Spec.Ports[0].Port)), 0, 0)
	elements := nl.NewRtAttr(unix.NLA_F_NESTED|unix.NFTA_SET_ELEM_LIST_ELEMENTS, nil)
	elements.AddRtAttr(unix.NLA_F_NESTED|unix.NFTA_LIST_ELEM, nil).
		AddRtAttr(unix.NLA_F_NESTED|unix.NFTA_SET_ELEM_KEY, nil).
		AddRtAttr(unix.NFTA_DATA_VALUE, key)
	_, err = nftRequest(unix.NFT_MSG_GETSETELEM, unix.NLM_F_ACK,
		nl.NewRtAttr(unix.NFTA_SET_ELEM_LIST_TABLE, nl.ZeroTerminated(nftables.TableName)),
		nl.NewRtAttr(unix.NFTA_SET_ELEM_LIST_SET, nl.ZeroTerminated("service-ips")),
		elements)
	if err != nil {
		return fmt.Errorf("not in the kernel: service-ips element %s . tcp . %d: %w", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port, err)
	}
	return nil
}

// nftRequest sends one nf_tables request on the IPv4 family in this
// process's namespace and returns the payloads of its answer, after their
// nfgenmsg (a missing object is the kernel's ENOENT).
func nftRequest(msg uint16, flags int, attrs ...*nl.RtAttr) ([][]byte, error) {
	req := nl.NewNetlinkRequest(unix.NFNL_SUBSYS_NFTABLES<<8|int(msg), flags)
	req.AddData(&nl.Nfgenmsg{NfgenFamily: unix.AF_INET, Version: unix.NFNETLINK_V0})
	for _, a := range attrs {
		req.AddData(a)
	}
	msgs, err := req.Execute(unix.NETLINK_NETFILTER, 0)
	for i, m := range msgs {
		msgs[i] = m[min(len(m), nl.SizeofNfgenmsg):]
	}
	return msgs, err
}

// lookedUpSets are the sets the dumped rules' lookup expressions name.
func lookedUpSets(rules [][]byte) []string {
	var sets []string
	for _, r := range rules {
		for _, exprs := range attrsOf(r, unix.NFTA_RULE_EXPRESSIONS) {
			for _, e := range attrsOf(exprs, unix.NFTA_LIST_ELEM) {
				if name := attrsOf(e, unix.NFTA_EXPR_NAME); len(name) != 1 || string(name[0]) != "lookup\x00" {
					continue
				}
				for _, data := range attrsOf(e, unix.NFTA_EXPR_DATA) {
					for _, set := range attrsOf(data, unix.NFTA_LOOKUP_SET) {
						sets = append(sets, string(bytes.TrimRight(set, "\x00")))
					}
				}
			}
		}
	}
	return sets
}

// attrsOf are the values of the attributes of type typ (nested or not)
// in a list of attributes; a malformed list has none.
func attrsOf(b []byte, typ uint16) [][]byte {
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return nil
	}
	var out [][]byte
	for _, a := range attrs {
		if a.Attr.Type&^(unix.NLA_F_NESTED|unix.NLA_F_NET_BYTEORDER) == typ {
			out = append(out, a.Value)
		}
	}
	return out
}
