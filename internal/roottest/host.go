package roottest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// HostSnapshot is what the scenarios promise never to change: the host's
// root network namespace — its links, routes, iptables rules (both
// backends) and route_localnet. Comments and counters are left out.
type HostSnapshot map[string]string

// SnapshotHost reads the root namespace's state.
func SnapshotHost() HostSnapshot {
	snap := HostSnapshot{}
	for name, args := range map[string][]string{
		"links":           {"ip", "-o", "link", "show"},
		"addresses":       {"ip", "-o", "addr", "show"},
		"routes":          {"ip", "route", "show", "table", "all"},
		"iptables-nft":    {"iptables-nft-save"},
		"iptables-legacy": {"iptables-legacy-save"},
	} {
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			snap[name] = fmt.Sprintf("(%s failed: %v)", args[0], err)
			continue
		}
		var keep []string
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			if strings.HasPrefix(line, ":") { // ":CHAIN POLICY [packets:bytes]"
				if i := strings.LastIndexByte(line, '['); i > 0 {
					line = line[:i]
				}
			}
			keep = append(keep, line)
		}
		snap[name] = strings.Join(keep, "\n")
	}
	// A proxy set to serve node ports on localhost writes route_localnet in
	// its own namespace, never the host's.
	for _, key := range []string{"net/ipv4/conf/all/route_localnet"} {
		v, err := os.ReadFile("/proc/sys/" + key)
		snap["sysctl "+key] = strings.TrimSpace(string(v))
		if err != nil {
			snap["sysctl "+key] = fmt.Sprintf("(read failed: %v)", err)
		}
	}
	return snap
}

// Diff lists what differs between two snapshots ("" when nothing does).
func (s HostSnapshot) Diff(after HostSnapshot) string {
	var b strings.Builder
	for name, before := range s {
		if after[name] != before {
			fmt.Fprintf(&b, "%s changed:\n--- before\n%s\n--- after\n%s\n", name, before, after[name])
		}
	}
	return b.String()
}
