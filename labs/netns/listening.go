package netns

import (
	"encoding/binary"
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Socket states as the kernel numbers them (include/net/tcp_states.h).
const (
	stateListen = 10 // TCP_LISTEN
	stateClose  = 7  // TCP_CLOSE: an unconnected UDP socket
)

// socketPorts are the local ports of the sockets of protocol
// (unix.IPPROTO_TCP or IPPROTO_UDP, IPv4 and IPv6) in state, in the
// named network namespace (as in /run/netns), asked of the kernel's sock_diag
// (what `ss -l` does). Asking for listening TCP sockets only, the kernel
// walks its listening hash alone; /proc/PID/net/tcp walks every bucket of
// the established hash too (262,144 here, whichever namespace), some
// 8 ms per read.
func socketPorts(namespace string, protocol, state uint8) (map[int]bool, error) {
	target, err := netns.GetFromName(namespace)
	if err != nil {
		return nil, err
	}
	defer target.Close()
	self, err := netns.Get()
	if err != nil {
		return nil, err
	}
	defer self.Close()
	s, err := nl.GetNetlinkSocketAt(target, self, unix.NETLINK_INET_DIAG)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	out := map[int]bool{}
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		if err := dumpSocketPorts(s, family, protocol, state, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dumpSocketPorts asks for one family's sockets and adds their ports.
func dumpSocketPorts(s *nl.NetlinkSocket, family, protocol, state uint8, out map[int]bool) error {
	req := nl.NewNetlinkRequest(nl.SOCK_DIAG_BY_FAMILY, unix.NLM_F_DUMP)
	req.AddData(diagRequest{family: family, protocol: protocol, states: 1 << state})
	if err := s.Send(req); err != nil {
		return err
	}
	for {
		msgs, _, err := s.Receive()
		if err != nil {
			return err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if errno := int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
						return fmt.Errorf("sock_diag: %w", unix.Errno(-errno))
					}
				}
				return nil
			}
			// struct inet_diag_msg: family, state, timer, retrans, then
			// the socket id, whose first field is the source port
			// (big-endian).
			if len(m.Data) >= 6 {
				out[int(binary.BigEndian.Uint16(m.Data[4:6]))] = true
			}
		}
	}
}

// diagRequest is struct inet_diag_req_v2 with an empty socket id: every
// socket of the family and protocol in the states.
type diagRequest struct {
	family, protocol uint8
	states           uint32
}

// sizeofDiagRequest is sizeof(struct inet_diag_req_v2): four bytes, the
// states, and the 48-byte inet_diag_sockid.
const sizeofDiagRequest = 56

func (r diagRequest) Len() int { return sizeofDiagRequest }

func (r diagRequest) Serialize() []byte {
	b := make([]byte, sizeofDiagRequest)
	b[0], b[1] = r.family, r.protocol
	binary.NativeEndian.PutUint32(b[4:8], r.states)
	return b
}
