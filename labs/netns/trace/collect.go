package trace

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
)

// Options are svclab trace's settings.
type Options struct {
	// Proto is tcp (the default) or udp.
	Proto string
	// Timeout bounds the connection (default 3 s).
	Timeout time.Duration
}

// maxHops bounds the walk along the path (a routing loop ends it).
const maxHops = 16

// traceTables are the tables whose counters are read: the two kube-proxy,
// flannel and Calico write (reading raw or mangle with iptables-legacy would
// load their modules on the host).
var traceTables = []string{"nat", "filter"}

// Trace opens one connection from the lab host from to to, and returns
// what the kernel showed about it, analysed. It is Collect, then Analyze.
func Trace(ctx context.Context, l *netns.Lab, from string, to netip.AddrPort, opts Options) (*Result, error) {
	c, err := Collect(ctx, l, from, to, opts)
	if err != nil {
		return nil, err
	}
	return Analyze(c)
}

// Collect gathers a Capture in named steps: the lab's hosts and their
// addresses, every node's counters, the connection, the counters again,
// then the walk along the path (conntrack, routes, neighbours, VXLAN).
func Collect(ctx context.Context, l *netns.Lab, from string, to netip.AddrPort, opts Options) (*Capture, error) {
	if opts.Proto == "" {
		opts.Proto = "tcp"
	}
	if opts.Proto != "tcp" && opts.Proto != "udp" {
		return nil, fmt.Errorf("trace: --proto %q: want tcp or udp", opts.Proto)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Second
	}
	if !to.IsValid() || to.Addr().Zone() != "" || to.Port() == 0 {
		return nil, fmt.Errorf("trace: --to %q: want an IP address and a port", to)
	}
	to = netip.AddrPortFrom(to.Addr().Unmap(), to.Port())
	fromNS, err := l.Namespace(from)
	if err != nil {
		return nil, err
	}
	inv, err := takeInventory(l)
	if err != nil {
		return nil, err
	}
	c := &Capture{Lab: l.Name(), Method: MethodCounters, Proto: opts.Proto, From: from, To: to, ProxyMode: proxyMode(l)}
	save := saveCommand(l.Topology.Spec.Proxy.IPTablesBackend.Command(), to.Addr().Is6())
	before, err := saveAll(l, inv.nodes, save)
	if err != nil {
		return nil, err
	}
	conn := connect(ctx, fromNS, opts.Proto, to, opts.Timeout)
	c.Source, c.Answer = conn.local, conn.answer
	if conn.err != nil {
		c.Error = conn.err.Error()
	}
	if !c.Source.IsValid() {
		return nil, fmt.Errorf("trace: from %s to %s: %s", from, to, c.Error)
	}
	// The conntrack entries first: a connection the server's kernel ended
	// with an RST after the last ACK (seen on the host; in the loaded VM
	// CI's trace found no entry, apparently for this reason) keeps its
	// entry in CLOSE for only 10 s, and the saves take seconds each in
	// svclab's emulated VM.
	flows, err := dumpAll(inv)
	if err != nil {
		return nil, err
	}
	after, err := saveAll(l, inv.nodes, save)
	if err != nil {
		return nil, err
	}
	if err := walk(c, inv, before, after, flows); err != nil {
		return nil, err
	}
	return c, nil
}

// proxyMode is the mode the nodes' proxies report, else the lab file's.
func proxyMode(l *netns.Lab) string {
	if st, err := l.Store.ProxyStatuses(); err == nil {
		for _, s := range st {
			if s.Mode != "" {
				return s.Mode
			}
		}
	}
	if m := l.Topology.Spec.Proxy.Mode; m != "" {
		return string(m)
	}
	return string(topology.ProxyModeIPTables)
}

// saveCommand is the -save program of the lab's iptables backend (the
// iptables, iptables-legacy or iptables-nft command) for the traced
// connection's family: ip6tables-save and its variants for IPv6, whose
// counters the IPv6 rules keep.
func saveCommand(backend string, ipv6 bool) string {
	if ipv6 {
		backend = strings.Replace(backend, "iptables", "ip6tables", 1)
	}
	return backend + "-save"
}

// saveAll reads `bin -t T -c` (iptables-save or ip6tables-save) of every
// table in every node.
func saveAll(l *netns.Lab, nodes []string, bin string) (map[string][]TableCapture, error) {
	out := map[string][]TableCapture{}
	for _, node := range nodes {
		ns := network.NamespaceName(l.Name(), node)
		for _, table := range traceTables {
			cmd := network.NetnsCommand(ns, bin, "-t", table, "-c")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			text, err := cmd.Output()
			if err != nil {
				return nil, fmt.Errorf("trace: %s: %s -t %s -c: %w: %s", node, bin, table, err, strings.TrimSpace(stderr.String()))
			}
			out[node] = append(out[node], TableCapture{Table: table, Before: string(text)})
		}
	}
	return out, nil
}
