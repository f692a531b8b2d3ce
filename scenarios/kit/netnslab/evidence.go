package netnslab

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/svclab/svclab/labs/netns/trace"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/scenarios/kit"
)

// TraceConnection is `svclab trace` from the client's host (the pod, or
// the lab's client outside the cluster) to to, as text.
func (w *labWorkspace) TraceConnection(ctx context.Context, from kit.Client, to netip.AddrPort, proto string) (string, error) {
	host := from.Pod
	if host == "" {
		host = "client"
	}
	res, err := trace.Trace(ctx, w.lab.Lab, host, to, trace.Options{Proto: proto})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := trace.WriteText(&b, res); err != nil {
		return "", err
	}
	return b.String(), nil
}

// IPVS is the node's IPVS table, read over netlink, in `ipvsadm -Ln`'s
// shape.
func (w *labWorkspace) IPVS(_ context.Context, node string) (string, error) {
	vss, err := w.lab.IPVS(node)
	if err != nil {
		return "", err
	}
	return ipvsadmText(vss), nil
}

// ipvsadmText writes virtual servers as `ipvsadm -Ln` lists them.
func ipvsadmText(vss []kit.VirtualServer) string {
	var b strings.Builder
	for _, vs := range vss {
		fmt.Fprintf(&b, "%s  %s %s", vs.Protocol, netip.AddrPortFrom(vs.Address, vs.Port), vs.Scheduler)
		if vs.Flags&kernel.FlagPersistent != 0 {
			fmt.Fprintf(&b, " persistent %d", vs.Timeout)
		}
		b.WriteString("\n")
		for _, rs := range vs.RealServers {
			fmt.Fprintf(&b, "  -> %s  Masq  %d  %d  %d\n", rs.Key(), rs.Weight, rs.ActiveConn, rs.InactiveConn)
		}
	}
	return b.String()
}
