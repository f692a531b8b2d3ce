package conformance

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns/trace"
	"github.com/svclab/svclab/scenarios/kit"
)

// traceTimeout bounds the traced connection: a Service that does not
// answer is itself the evidence, and the trace says so.
const traceTimeout = 3 * time.Second

// traceConnection is the trace of one connection from from to to: `svclab
// trace`'s where the workspace is a netns lab (kit.ConnectionTracer), else
// counterTrace.
func traceConnection(ctx context.Context, ws kit.Workspace, from kit.Client, to netip.AddrPort, proto string) (string, error) {
	if t, ok := ws.(kit.ConnectionTracer); ok {
		return t.TraceConnection(ctx, from, to, proto)
	}
	return counterTrace(ctx, ws, from, to, proto)
}

// counterTraceNote says what counterTrace's text is.
const counterTraceNote = "trace on a cluster: one connection, and the rules of the node it enters at whose packet counters moved " +
	"between `iptables-save -c` (tables nat and filter) before and after it, in the order a packet meets them — what " +
	"`svclab trace` shows on a lab, node by node. Other traffic through the node in that window counts too; " +
	"the conntrack entry is the connection's own (its client address and port)."

// counterTrace traces one connection through a cluster's node with what
// every workspace has: iptables-save -c of the node the connection
// enters at, before and after one connection (TrafficWith), and that
// connection's conntrack entry there. labs/netns/trace reads the two
// readings as it reads a lab's, so the text has `svclab trace`'s shape,
// with one hop: the entry node.
func counterTrace(ctx context.Context, ws kit.Workspace, from kit.Client, to netip.AddrPort, proto string) (string, error) {
	node := from.Node
	mode, modeErr := ws.ProxyMode(ctx, node)
	if modeErr != nil {
		mode = "unknown"
	}
	before, err := saveForTrace(ctx, ws, node)
	if err != nil {
		return "", err
	}
	res, err := ws.TrafficWith(ctx, from, to, kit.TrafficOptions{Connections: 1, Protocol: proto, Timeout: traceTimeout})
	if err != nil {
		return "", fmt.Errorf("the traced connection: %w", err)
	}
	after, err := saveForTrace(ctx, ws, node)
	if err != nil {
		return "", err
	}
	flows, err := ws.Conntrack(ctx, node)
	if err != nil {
		return "", err
	}
	c := traceCapture(ws.Name(), from, to, proto, mode, res, before, after, flows)
	r, err := trace.Analyze(c)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(counterTraceNote + "\n")
	if mode == "nftables" {
		b.WriteString("note: in nftables mode kube-proxy's rules keep no counters: no matched rule can be read here; the conntrack entry shows the rewrites.\n")
	}
	if err := trace.WriteText(&b, r); err != nil {
		return "", err
	}
	return b.String(), nil
}

// traceTables are the tables whose counters a trace reads, as `svclab
// trace` does: the two kube-proxy and the pod networks write.
var traceTables = []string{"nat", "filter"}

// saveForTrace is iptables-save -c of each of traceTables, in order.
func saveForTrace(ctx context.Context, ws kit.Workspace, node string) ([]string, error) {
	var out []string
	for _, table := range traceTables {
		save, err := ws.IPTablesSave(ctx, node, table, true)
		if err != nil {
			return nil, fmt.Errorf("iptables-save -c -t %s on %s: %w", table, node, err)
		}
		out = append(out, save)
	}
	return out, nil
}

// traceCapture is what the cluster showed of the connection, as a
// labs/netns/trace Capture with the entry node as its one host.
func traceCapture(workspace string, from kit.Client, to netip.AddrPort, proto, mode string, res *traffic.Result, before, after []string, flows []conntrack.Flow) *trace.Capture {
	client := "outside the pod network, entering at " + from.Node
	if from.Pod != "" {
		client = "pod " + from.Pod
	}
	c := &trace.Capture{Lab: "workspace " + workspace, Method: trace.MethodCounters, Proto: proto, From: client, To: to, ProxyMode: mode}
	if len(res.Connections) > 0 {
		conn := res.Connections[0]
		c.Source, _ = netip.ParseAddrPort(conn.LocalAddress)
		c.Answer = conn.Backend
		if conn.Backend == "" {
			c.Error = strings.TrimSpace(string(conn.Failure) + " " + conn.Error)
		}
	}
	host := trace.HostCapture{Host: from.Node, Namespace: "host network", Role: "node", Arrived: trace.Tuple{Src: c.Source, Dst: to}}
	for i, table := range traceTables {
		host.Tables = append(host.Tables, trace.TableCapture{Table: table, Before: before[i], After: after[i]})
	}
	if c.Source.IsValid() {
		if f, ok := trace.MatchFlow(flows, proto, trace.Tuple{Src: c.Source, Dst: to}); ok {
			host.Conntrack = &f
		}
	}
	c.Hosts = []trace.HostCapture{host}
	return c
}
