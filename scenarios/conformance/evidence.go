package conformance

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// Evidence on failure: a spec that fails attaches what the node did with
// its Service — the node's rules for it (iptables, nftables or IPVS), the
// conntrack entries of connections to it, and a trace of one connection —
// as report entries, which ginkgo writes into the JUnit report (the
// testcase's timeline in <system-err>, and its <properties>), and, with
// Options.Artifacts, as files DIR/<spec>/{rules,conntrack,trace}.txt.

// evidenceSubject is what a spec family's connections are about.
type evidenceSubject struct {
	ws  kit.Workspace
	svc *corev1.Service
	// node is the node whose rules and conntrack table are read: the one
	// the spec's connections enter the cluster at.
	node string
	// from and to are the traced connection's client and destination.
	from kit.Client
	to   netip.AddrPort
}

// ready says whether the subject names a workspace and a Service (a
// spec that failed before its container read them has none).
func (e evidenceSubject) ready() bool { return e.ws != nil && e.svc != nil && e.node != "" }

// evidence is what a failed spec attaches, each part as text.
type evidence struct {
	Rules, Conntrack, Trace string
}

// evidenceTimeout bounds collecting one spec's evidence.
const evidenceTimeout = 3 * time.Minute

// evidenceReportLines bounds each part in the JUnit report; the files
// under Options.Artifacts have all of it.
const evidenceReportLines = 300

// evidenceOnFailure makes every spec of the container being declared
// attach evidence when it fails (an AfterEach, which runs while the
// container's workspace still exists). subject says, when the spec ends,
// which Service, node and connection the evidence is about.
func (s *suite) evidenceOnFailure(subject func() evidenceSubject) {
	AfterEach(func(ctx SpecContext) {
		report := CurrentSpecReport()
		if !report.State.Is(types.SpecStateFailed | types.SpecStatePanicked | types.SpecStateTimedout) {
			return
		}
		subj := subject()
		if !subj.ready() {
			AddReportEntry("evidence", "no evidence: the spec failed before its workspace, Service and node were read")
			return
		}
		ev := collectEvidence(ctx, subj)
		ev.report()
		if s.opts.Artifacts != "" {
			dir := filepath.Join(s.opts.Artifacts, specDirName(report.FullText()))
			if err := ev.write(dir); err != nil {
				AddReportEntry("evidence: artifacts", fmt.Sprintf("not written to %s: %v", dir, err))
			} else {
				AddReportEntry("evidence: artifacts", dir)
			}
		}
	}, NodeTimeout(evidenceTimeout))
}

// collectEvidence reads the subject's evidence from its workspace. A
// part it cannot read says why instead.
func collectEvidence(ctx context.Context, e evidenceSubject) evidence {
	nodes, err := e.ws.Nodes(ctx)
	nodesNote := ""
	if err != nil {
		nodesNote = fmt.Sprintf("(the nodes' addresses not read, node ports left out: %v)\n", err)
	}
	addrs := serviceAddrPorts(e.svc, nodes)
	head := fmt.Sprintf("Service %s (%s) on node %s; workspace %s\n%s", serviceKey(e.svc), describeAddrs(addrs), e.node, e.ws.Name(), nodesNote)
	return evidence{
		Rules:     head + nodeRules(ctx, e.ws, e.node, e.svc, addrs),
		Conntrack: head + nodeConntrack(ctx, e.ws, e.node, addrs),
		Trace:     head + connectionTrace(ctx, e),
	}
}

// nodeRules are the node's rules for the Service in the forms its proxy
// mode writes (/proxyMode): iptables (nat and filter, with counters) in
// iptables and ipvs mode, kube-proxy's nftables table in nftables mode,
// the IPVS virtual servers in ipvs mode; every form when the mode is not
// known (a proxy that is not kube-proxy).
func nodeRules(ctx context.Context, ws kit.Workspace, node string, svc *corev1.Service, addrs []netip.AddrPort) string {
	var b strings.Builder
	mode, err := ws.ProxyMode(ctx, node)
	if err == nil {
		fmt.Fprintf(&b, "proxy mode (/proxyMode on %s): %s\n", node, mode)
	} else {
		mode = ""
		fmt.Fprintf(&b, "proxy mode: not read on %s (%s): every form of rules follows\n", node, firstLine(err.Error()))
	}
	if mode == "" || mode == "iptables" || mode == "ipvs" {
		b.WriteString("\n# iptables-save -c (nat, filter): the rules that name the Service or match its addresses, and the chains they lead to\n")
		var saves strings.Builder
		var saveErr error
		for _, table := range []string{"nat", "filter"} {
			save, err := ws.IPTablesSave(ctx, node, table, true)
			if err != nil {
				saveErr = err
				continue
			}
			saves.WriteString(save)
		}
		section(&b, iptablesServiceRules(saves.String(), svc, addrsOf(addrs)), saveErr)
	}
	if mode == "" || mode == "nftables" {
		b.WriteString("\n# nft -j list table ip kube-proxy: the Service's chains and rules, and the map and set elements that name it\n")
		table, err := ws.NFTables(ctx, node)
		if err == nil {
			section(&b, nftServiceObjects(table, svc, addrsOf(addrs)), nil)
		} else {
			section(&b, "", err)
		}
	}
	if mode == "" || mode == "ipvs" {
		b.WriteString("\n# IPVS (ipvsadm -Ln): the virtual servers at the Service's addresses, with their real servers\n")
		if l, ok := ws.(kit.IPVSLister); ok {
			list, err := l.IPVS(ctx, node)
			section(&b, ipvsServiceEntries(list, addrs), err)
		} else {
			b.WriteString("(this target does not list IPVS tables)\n")
		}
	}
	return b.String()
}

// section writes one part of the rules: its text, or that the node has
// none for the Service, or why it was not read.
func section(b *strings.Builder, text string, err error) {
	switch {
	case text != "":
		b.WriteString(text)
	case err != nil:
		fmt.Fprintf(b, "(not read: %s)\n", firstLine(err.Error()))
	default:
		b.WriteString("(none for this Service)\n")
	}
}

// nodeConntrack are the node's conntrack entries to the Service's
// addresses: the spec's connections that are still tracked.
func nodeConntrack(ctx context.Context, ws kit.Workspace, node string, addrs []netip.AddrPort) string {
	flows, err := ws.Conntrack(ctx, node)
	if err != nil {
		return fmt.Sprintf("conntrack on %s: not read: %v\n", node, err)
	}
	lines := serviceFlows(flows, addrs)
	return fmt.Sprintf("conntrack on %s: %d of %d entries go to the Service's addresses (src/dst as sent, then as answered; [DNAT]/[SNAT]: the NAT bits)\n%s",
		node, len(lines), len(flows), joinLines(lines))
}

// connectionTrace traces one connection of the subject.
func connectionTrace(ctx context.Context, e evidenceSubject) string {
	if !e.to.IsValid() {
		return "no connection traced: the spec names no destination\n"
	}
	proto := serviceProtocol(e.svc, e.to.Port())
	text, err := traceConnection(ctx, e.ws, e.from, e.to, proto)
	if err != nil {
		return fmt.Sprintf("one %s connection to %s, traced: failed: %v\n", proto, e.to, err)
	}
	return text
}

// serviceProtocol is the protocol ("tcp" or "udp") of the Service's port
// or node port port; tcp when none is.
func serviceProtocol(svc *corev1.Service, port uint16) string {
	for _, p := range svc.Spec.Ports {
		if (p.Port == int32(port) || p.NodePort == int32(port)) && p.Protocol == corev1.ProtocolUDP {
			return "udp"
		}
	}
	return "tcp"
}

// report attaches the evidence to the running spec, each part bounded.
func (ev evidence) report() {
	AddReportEntry("evidence: rules", boundLines(ev.Rules, evidenceReportLines))
	AddReportEntry("evidence: conntrack", boundLines(ev.Conntrack, evidenceReportLines))
	AddReportEntry("evidence: trace", boundLines(ev.Trace, evidenceReportLines))
}

// write writes the evidence as dir/{rules,conntrack,trace}.txt.
func (ev evidence) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, text := range map[string]string{"rules.txt": ev.Rules, "conntrack.txt": ev.Conntrack, "trace.txt": ev.Trace} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// notNameChars are what specDirName turns into dashes.
var notNameChars = regexp.MustCompile(`[^a-z0-9]+`)

// maxSpecDirName bounds a spec's directory name.
const maxSpecDirName = 120

// specDirName is a spec's full text as a directory name: lower case,
// every run of other characters than letters and digits one dash, at
// most maxSpecDirName characters.
func specDirName(fullText string) string {
	name := strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(fullText), "-"), "-")
	if len(name) > maxSpecDirName {
		name = strings.TrimRight(name[:maxSpecDirName], "-")
	}
	if name == "" {
		return "spec"
	}
	return name
}

// boundLines is text cut after n lines, saying how many more there were.
func boundLines(text string, n int) string {
	lines := strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) <= n {
		return text
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("… %d more lines (all of them under --artifacts)\n", len(lines)-n)
}

func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// describeAddrs is the Service's addresses, comma-separated.
func describeAddrs(addrs []netip.AddrPort) string {
	if len(addrs) == 0 {
		return "no address"
	}
	parts := make([]string, len(addrs))
	for i, a := range addrs {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}

// evidence is what the web workload's connections are about: the
// Service, on the probe pod's node, traced from the probe to the cluster
// IP.
func (w *web) evidence() evidenceSubject {
	if w.svc == nil || w.probe.Name == "" {
		return evidenceSubject{}
	}
	return evidenceSubject{ws: *w.ws, svc: w.svc, node: w.fromProbe().Node, from: w.fromProbe(), to: w.vip()}
}

// nodePortEvidence is what the cross-node NodePort spec's connections are
// about: the Service on node A (nodes[0]), traced from outside the pod
// network (node B's host network) to node A's node port.
func nodePortEvidence(ws kit.Workspace, svc *corev1.Service, nodes []kit.Node) evidenceSubject {
	if svc == nil || len(nodes) < 2 || len(svc.Spec.Ports) == 0 {
		return evidenceSubject{}
	}
	a, b := nodes[0], nodes[1]
	return evidenceSubject{ws: ws, svc: svc, node: a.Name, from: kit.Client{Node: b.Name}, to: netip.AddrPortFrom(a.IP, uint16(svc.Spec.Ports[0].NodePort))}
}
