package bench

import (
	"fmt"

	"github.com/svclab/svclab/tools/bench/report"
)

// notes say what dominates each number of a measurement: the kernel
// update that programs the Services, the lookup a new connection's first
// packet pays, and where the CPU time went. what names what prog's
// KernelObjects counted.
func notes(m Mode, n int, prog report.Programming, what string, cpu report.CPU) []string {
	var out []string
	switch m.ProxyMode {
	case "nftables":
		out = append(out,
			fmt.Sprintf("program: one nft transaction (%d %s)", prog.KernelObjects, what),
			"first packet: conntrack miss + one hash lookup in the service-ips verdict map")
	case "ipvs":
		out = append(out,
			fmt.Sprintf("program: IPVS over netlink, a message per virtual and real server (%d %s)", prog.KernelObjects, what),
			"first packet: conntrack miss + IPVS hash lookup of the virtual server")
	default:
		restore := "iptables-restore"
		switch m.Backend {
		case "legacy":
			restore = "iptables-legacy-restore (the whole nat table rewritten in the kernel)"
		case "nft":
			restore = "iptables-nft-restore (rules translated into one nf_tables transaction)"
		}
		out = append(out,
			fmt.Sprintf("program: %s of %d %s", restore, prog.KernelObjects, what),
			fmt.Sprintf("first packet: conntrack miss + linear walk of KUBE-SERVICES (the last Service is rule %d of %d)", n, n))
	}
	if prog.StoreMs > prog.ProxyMs {
		out = append(out, fmt.Sprintf("most of the programming time is the lab's apply (%d Services and EndpointSlices validated and stored), not the proxy", n))
	}
	switch {
	case cpu.ChildrenSeconds > cpu.ProxySeconds:
		out = append(out, "CPU: mostly the proxy's children (iptables-restore, nft)")
	case cpu.TotalSeconds() > 0:
		out = append(out, "CPU: mostly the proxy itself (reading the store, building, rendering)")
	}
	return out
}
