package ui

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// maxVirtualServers bounds what ParseIPVSStats reads.
const maxVirtualServers = 10_000

// ParseIPVSStats reads `ipvsadm -Ln --stats --exact`: each virtual server
// (TCP, UDP, SCTP or FWM line) with its counters, and its real servers
// ("  -> ADDRESS" lines) with theirs.
func ParseIPVSStats(out string) ([]VirtualServer, error) {
	vs := []VirtualServer{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) == 0, strings.HasPrefix(line, "IP Virtual Server"), f[0] == "Prot",
			f[0] == "->" && len(f) == 2 && f[1] == "RemoteAddress:Port":
		case f[0] == "->":
			if len(vs) == 0 {
				return nil, fmt.Errorf("ipvsadm line %d: a real server before any virtual server", n)
			}
			if len(f) != 7 {
				return nil, fmt.Errorf("ipvsadm line %d: %q: want -> ADDRESS and 5 counters", n, line)
			}
			st, err := parseIPVSStats(f[2:])
			if err != nil {
				return nil, fmt.Errorf("ipvsadm line %d: %w", n, err)
			}
			last := &vs[len(vs)-1]
			last.Real = append(last.Real, RealServer{Address: f[1], Stats: st})
		case f[0] == "TCP" || f[0] == "UDP" || f[0] == "SCTP" || f[0] == "FWM":
			if len(f) != 7 {
				return nil, fmt.Errorf("ipvsadm line %d: %q: want PROTOCOL ADDRESS and 5 counters", n, line)
			}
			if len(vs) == maxVirtualServers {
				return nil, fmt.Errorf("ipvsadm: more than %d virtual servers", maxVirtualServers)
			}
			st, err := parseIPVSStats(f[2:])
			if err != nil {
				return nil, fmt.Errorf("ipvsadm line %d: %w", n, err)
			}
			vs = append(vs, VirtualServer{Protocol: f[0], Address: f[1], Stats: st, Real: []RealServer{}})
		default:
			return nil, fmt.Errorf("ipvsadm line %d: %q: want a virtual or real server", n, line)
		}
	}
	return vs, sc.Err()
}

// parseIPVSStats reads the 5 exact counters: Conns InPkts OutPkts InBytes OutBytes.
func parseIPVSStats(f []string) (IPVSStats, error) {
	var v [5]uint64
	for i, s := range f {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return IPVSStats{}, fmt.Errorf("counter %q: want an exact number (ipvsadm --exact)", s)
		}
		v[i] = n
	}
	return IPVSStats{Conns: v[0], InPkts: v[1], OutPkts: v[2], InBytes: v[3], OutBytes: v[4]}, nil
}
