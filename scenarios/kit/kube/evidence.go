package kube

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/svclab/svclab/labs/agents/selfexec"
)

// IPVS is the node's IPVS table (kit.IPVSLister): the node's own
// `ipvsadm -Ln`, or, on a node without ipvsadm, /proc/net/ip_vs with its
// hexadecimal IPv4 addresses written as ipvsadm writes them.
func (w *workspace) IPVS(ctx context.Context, node string) (string, error) {
	out, err := w.t.onNode(ctx, node, &selfexec.NodeRun{Argv: []string{"ipvsadm", "-Ln"}})
	if err == nil {
		return out, nil
	}
	proc, procErr := w.t.onNode(ctx, node, &selfexec.NodeRun{Argv: []string{"cat", "/proc/net/ip_vs"}})
	if procErr != nil {
		return "", fmt.Errorf("node %s: ipvsadm -Ln: %v; cat /proc/net/ip_vs: %v", node, err, procErr)
	}
	return procIPVSText(proc), nil
}

// procIPVSText is /proc/net/ip_vs with each "0A600001:0050" (an IPv4
// address and port in hexadecimal) written "10.96.0.1:80"; every other
// word is kept.
func procIPVSText(proc string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(proc, "\n") {
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		words := strings.Fields(line)
		for i, w := range words {
			if a, ok := hexAddrPort(w); ok {
				words[i] = a.String()
			}
		}
		if len(words) == 0 {
			b.WriteString(strings.TrimRight(line, " "))
			continue
		}
		b.WriteString(indent + strings.Join(words, "  "))
		if strings.HasSuffix(line, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// hexAddrPort reads "0A600001:0050": eight hexadecimal digits of an IPv4
// address in network order, a colon, four of a port.
func hexAddrPort(s string) (netip.AddrPort, bool) {
	addr, port, ok := strings.Cut(s, ":")
	if !ok || len(addr) != 8 || len(port) != 4 {
		return netip.AddrPort{}, false
	}
	a, err := hex.DecodeString(addr)
	if err != nil {
		return netip.AddrPort{}, false
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte(a)), uint16(p)), true
}
