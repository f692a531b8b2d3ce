package upstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"syscall"

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
	nl, err := dialNFTables()
	if err != nil {
		return err
	}
	defer nl.close()
	rules, err := nl.dump(unix.NFT_MSG_GETRULE, func(a *nlAttrs) {
		a.str(unix.NFTA_RULE_TABLE, nftables.TableName)
		a.str(unix.NFTA_RULE_CHAIN, chain)
	})
	if err != nil {
		return fmt.Errorf("not in the kernel: rules of chain %s: %w", chain, err)
	}
	for _, set := range lookedUpSets(rules) {
		elems, err := nl.dump(unix.NFT_MSG_GETSETELEM, func(a *nlAttrs) {
			a.str(unix.NFTA_SET_ELEM_LIST_TABLE, nftables.TableName)
			a.str(unix.NFTA_SET_ELEM_LIST_SET, set)
		})
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
	nl, err := dialNFTables()
	if err != nil {
		return err
	}
	defer nl.close()
	_, err = nl.request(unix.NFT_MSG_GETSETELEM, 0, func(a *nlAttrs) {
		a.str(unix.NFTA_SET_ELEM_LIST_TABLE, nftables.TableName)
		a.str(unix.NFTA_SET_ELEM_LIST_SET, "service-ips")
		a.nest(unix.NFTA_SET_ELEM_LIST_ELEMENTS, func(l *nlAttrs) {
			l.nest(unix.NFTA_LIST_ELEM, func(e *nlAttrs) {
				e.nest(unix.NFTA_SET_ELEM_KEY, func(k *nlAttrs) { k.put(unix.NFTA_DATA_VALUE, key) })
			})
		})
	})
	if err != nil {
		return fmt.Errorf("not in the kernel: service-ips element %s . tcp . %d: %w", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port, err)
	}
	return nil
}

// lookedUpSets are the sets the dumped rules' lookup expressions name.
func lookedUpSets(rules [][]byte) []string {
	var sets []string
	for _, r := range rules {
		for _, exprs := range attrsOf(r, unix.NFTA_RULE_EXPRESSIONS) {
			for _, e := range splitAttrs(exprs) {
				if name := attrsOf(e.value, unix.NFTA_EXPR_NAME); len(name) == 1 && string(name[0]) == "lookup\x00" {
					for _, data := range attrsOf(e.value, unix.NFTA_EXPR_DATA) {
						for _, set := range attrsOf(data, unix.NFTA_LOOKUP_SET) {
							sets = append(sets, string(bytes.TrimRight(set, "\x00")))
						}
					}
				}
			}
		}
	}
	return sets
}

// nlAttrs builds netlink attributes (native-endian length and type,
// payload padded to four bytes).
type nlAttrs struct{ b []byte }

func (a *nlAttrs) put(typ uint16, data []byte) {
	a.b = binary.NativeEndian.AppendUint16(a.b, uint16(4+len(data)))
	a.b = binary.NativeEndian.AppendUint16(a.b, typ)
	a.b = append(a.b, data...)
	for len(a.b)%4 != 0 {
		a.b = append(a.b, 0)
	}
}

func (a *nlAttrs) str(typ uint16, s string) { a.put(typ, append([]byte(s), 0)) }

func (a *nlAttrs) nest(typ uint16, fill func(*nlAttrs)) {
	var in nlAttrs
	fill(&in)
	a.put(typ|unix.NLA_F_NESTED, in.b)
}

type nlAttr struct {
	typ   uint16
	value []byte
}

// splitAttrs splits a list of attributes (a malformed tail is dropped).
func splitAttrs(b []byte) []nlAttr {
	var out []nlAttr
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b))
		if l < 4 || l > len(b) {
			break
		}
		out = append(out, nlAttr{typ: binary.NativeEndian.Uint16(b[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER), value: b[4:l]})
		b = b[min(len(b), (l+3)&^3):]
	}
	return out
}

// attrsOf are the values of the attributes of type typ in a message's
// payload after its nfgenmsg, or in a nested attribute's value.
func attrsOf(b []byte, typ uint16) [][]byte {
	var out [][]byte
	for _, a := range splitAttrs(b) {
		if a.typ == typ {
			out = append(out, a.value)
		}
	}
	return out
}

// nftNetlink is a NETLINK_NETFILTER socket of this process's namespace.
type nftNetlink struct {
	fd  int
	seq uint32
}

func dialNFTables() (*nftNetlink, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &nftNetlink{fd: fd}, nil
}

func (n *nftNetlink) close() { unix.Close(n.fd) }

// dump is a dump request's answer: each message's payload after its
// nfgenmsg.
func (n *nftNetlink) dump(msg uint16, fill func(*nlAttrs)) ([][]byte, error) {
	return n.request(msg, unix.NLM_F_DUMP, fill)
}

// request sends one nf_tables request (acknowledged unless a dump) and
// reads its answer until NLMSG_DONE or the acknowledgement.
func (n *nftNetlink) request(msg uint16, flags uint16, fill func(*nlAttrs)) ([][]byte, error) {
	var a nlAttrs
	fill(&a)
	n.seq++
	if flags&unix.NLM_F_DUMP == 0 {
		flags |= unix.NLM_F_ACK
	}
	req := binary.NativeEndian.AppendUint32(nil, uint32(unix.SizeofNlMsghdr+4+len(a.b)))
	req = binary.NativeEndian.AppendUint16(req, unix.NFNL_SUBSYS_NFTABLES<<8|msg)
	req = binary.NativeEndian.AppendUint16(req, unix.NLM_F_REQUEST|flags)
	req = binary.NativeEndian.AppendUint32(req, n.seq)
	req = binary.NativeEndian.AppendUint32(req, 0)
	req = append(req, unix.AF_INET, unix.NFNETLINK_V0, 0, 0)
	req = append(req, a.b...)
	if err := unix.Sendto(n.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	var out [][]byte
	buf := make([]byte, 1<<20)
	for {
		size, _, err := unix.Recvfrom(n.fd, buf, 0)
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:size])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if m.Header.Seq != n.seq {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return nil, errors.New("short netlink error")
				}
				if code := int32(binary.NativeEndian.Uint32(m.Data)); code != 0 {
					return nil, unix.Errno(-code)
				}
				return out, nil // the acknowledgement
			default:
				if len(m.Data) >= 4 {
					out = append(out, m.Data[4:])
				}
			}
		}
	}
}
