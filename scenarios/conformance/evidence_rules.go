package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/iptsave"
	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/scenarios/kit"
)

// The pure part of a failed spec's evidence: the lines of a node's rules
// and conntrack table that concern one Service, picked from what the node
// listed. Each function reads text a node gave and never fails on it: what
// it cannot read it leaves out, and says so.

// serviceKey is "namespace/name", as kube-proxy writes it in its rule
// comments and nftables chain names.
func serviceKey(svc *corev1.Service) string { return svc.Namespace + "/" + svc.Name }

// perServiceChainPrefixes are the iptables chains kube-proxy writes for
// one Service or endpoint (pkg/proxy/iptables/proxier.go): a rule of the
// Service that jumps to one of them brings that chain along.
var perServiceChainPrefixes = []string{"KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-FW-", "KUBE-SEP-"}

// iptablesServiceRules are the rules of iptables-save output (one or more
// tables, with or without counters) that concern svc: each rule whose
// comment names the Service ("ns/name", "ns/name:port …") or that matches
// one of its addresses, and every rule of the per-Service and
// per-endpoint chains those rules lead to, in the order saved, under
// their table's header and their chains' declarations (with the policy
// counters of built-in chains).
func iptablesServiceRules(save string, svc *corev1.Service, addrs []netip.Addr) string {
	tables, err := iptsave.Parse(save)
	if err != nil {
		return fmt.Sprintf("(iptables-save output not read: %v)\n", err)
	}
	var b strings.Builder
	for _, t := range tables {
		rules := serviceRulesOf(t, serviceKey(svc), addrs)
		if len(rules) == 0 {
			continue
		}
		declared := map[string]bool{}
		for _, r := range rules {
			declared[r.Chain] = true
		}
		b.WriteString("*" + t.Name + "\n")
		for _, c := range t.Chains {
			if declared[c.Name] {
				fmt.Fprintf(&b, ":%s %s [%d:%d]\n", c.Name, c.Policy, c.Counters.Packets, c.Counters.Bytes)
			}
		}
		for _, r := range rules {
			b.WriteString(r.String() + "\n")
		}
	}
	return b.String()
}

// serviceRulesOf is iptablesServiceRules for one table: the rules kept,
// in order.
func serviceRulesOf(t iptsave.Table, key string, addrs []netip.Addr) []iptsave.Rule {
	chains := map[string]bool{}
	keep := make([]bool, len(t.Rules))
	// Rules that name the Service or its addresses, then the chains they
	// lead to, until no new chain comes.
	for i, r := range t.Rules {
		args, err := iptsave.Fields(r.Spec)
		if err != nil {
			continue
		}
		if mentionsService(args, key, addrs) {
			keep[i] = true
			if isPerServiceChain(r.Chain) {
				chains[r.Chain] = true
			}
			if target := ruleJumpTarget(args); isPerServiceChain(target) {
				chains[target] = true
			}
		}
	}
	for grew := true; grew; {
		grew = false
		for i, r := range t.Rules {
			if !chains[r.Chain] || keep[i] {
				continue
			}
			keep[i] = true
			args, _ := iptsave.Fields(r.Spec)
			if target := ruleJumpTarget(args); isPerServiceChain(target) && !chains[target] {
				chains[target], grew = true, true
			}
		}
	}
	var rules []iptsave.Rule
	for i, r := range t.Rules {
		if keep[i] {
			rules = append(rules, r)
		}
	}
	return rules
}

// mentionsService: a comment that is the Service's key or starts with it
// (then ":" or a blank), or an address argument that is one of addrs.
func mentionsService(args []string, key string, addrs []netip.Addr) bool {
	for i, a := range args {
		if i > 0 && args[i-1] == "--comment" {
			if rest, ok := strings.CutPrefix(a, key); ok && (rest == "" || rest[0] == ':' || rest[0] == ' ') {
				return true
			}
			continue
		}
		if p, err := netip.ParsePrefix(a); err == nil && p.IsSingleIP() && slices.Contains(addrs, p.Addr()) {
			return true
		}
		if ip, err := netip.ParseAddr(a); err == nil && slices.Contains(addrs, ip) {
			return true
		}
	}
	return false
}

// ruleJumpTarget is the chain a rule jumps or goes to ("" for none).
func ruleJumpTarget(args []string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-j" || args[i] == "-g" || args[i] == "--jump" || args[i] == "--goto" {
			return args[i+1]
		}
	}
	return ""
}

func isPerServiceChain(chain string) bool {
	for _, p := range perServiceChainPrefixes {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

// nftServiceObjects are the objects of `nft -j list table …` output that
// concern svc, one per line as nft -j lists them: the chains whose names
// hold the Service's key ("service-…-ns/name/tcp/p80", "endpoint-…"),
// their rules, and the elements of maps and sets that name the Service's
// chains or addresses (kube-proxy's service-ips and service-nodeports
// verdict maps), each given with its map's name.
func nftServiceObjects(table string, svc *corev1.Service, addrs []netip.Addr) string {
	var out struct {
		Nftables []map[string]json.RawMessage `json:"nftables"`
	}
	if err := json.Unmarshal([]byte(table), &out); err != nil {
		return fmt.Sprintf("(nft -j output not read: %v)\n", err)
	}
	marker := serviceKey(svc) + "/"
	mentions := func(raw []byte) bool {
		if bytes.Contains(raw, []byte(marker)) {
			return true
		}
		for _, a := range addrs {
			if bytes.Contains(raw, []byte(`"`+a.String()+`"`)) {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	for _, obj := range out.Nftables {
		for kind, raw := range obj { // one key per object
			switch kind {
			case "chain", "rule":
				var named struct{ Name, Chain string }
				json.Unmarshal(raw, &named)
				if strings.Contains(named.Name, marker) || strings.Contains(named.Chain, marker) || (kind == "rule" && mentions(raw)) {
					fmt.Fprintf(&b, "%s %s\n", kind, compactJSON(raw))
				}
			case "map", "set":
				var m struct {
					Name string            `json:"name"`
					Elem []json.RawMessage `json:"elem"`
				}
				json.Unmarshal(raw, &m)
				for _, e := range m.Elem {
					if mentions(e) {
						fmt.Fprintf(&b, "%s %s element %s\n", kind, m.Name, compactJSON(e))
					}
				}
			}
		}
	}
	return b.String()
}

func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// ipvsServiceEntries are the virtual servers of `ipvsadm -Ln` output
// (kit.IPVSLister) at one of the Service's addresses, each with its real
// servers.
func ipvsServiceEntries(list string, addrs []netip.AddrPort) string {
	var b strings.Builder
	keep := false
	for _, line := range strings.Split(list, "\n") {
		words := strings.Fields(line)
		switch {
		case len(words) >= 2 && (words[0] == "TCP" || words[0] == "UDP" || words[0] == "SCTP"):
			a, err := netip.ParseAddrPort(words[1])
			keep = err == nil && slices.Contains(addrs, a)
		case len(words) > 0 && words[0] == "->":
			// a real server of the virtual server above
		default:
			keep = false
		}
		if keep {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// serviceAddrPorts are the addresses a connection to svc goes to: each
// cluster IP, external IP and load balancer address with each port, and
// each node's address with each node port.
func serviceAddrPorts(svc *corev1.Service, nodes []kit.Node) []netip.AddrPort {
	var out []netip.AddrPort
	add := func(ip string, port int32) {
		if a, err := netip.ParseAddr(ip); err == nil && port > 0 {
			out = append(out, netip.AddrPortFrom(a, uint16(port)))
		}
	}
	var ips []string
	ips = append(ips, svc.Spec.ClusterIPs...)
	if len(svc.Spec.ClusterIPs) == 0 {
		ips = append(ips, svc.Spec.ClusterIP)
	}
	ips = append(ips, svc.Spec.ExternalIPs...)
	for _, in := range svc.Status.LoadBalancer.Ingress {
		ips = append(ips, in.IP)
	}
	for _, p := range svc.Spec.Ports {
		for _, ip := range ips {
			add(ip, p.Port)
		}
		for _, n := range nodes {
			if p.NodePort > 0 && n.IP.IsValid() {
				out = append(out, netip.AddrPortFrom(n.IP, uint16(p.NodePort)))
			}
		}
	}
	return out
}

// addrsOf are the distinct addresses of addrPorts, in order.
func addrsOf(addrPorts []netip.AddrPort) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrPorts {
		if !slices.Contains(out, a.Addr()) {
			out = append(out, a.Addr())
		}
	}
	return out
}

// serviceFlows are the conntrack entries whose original destination is
// one of the Service's addresses, as `conntrack -L` prints them, NAT
// bits included.
func serviceFlows(flows []conntrack.Flow, addrs []netip.AddrPort) []string {
	var out []string
	for _, f := range flows {
		if slices.Contains(addrs, f.Orig.Dst) {
			out = append(out, f.String())
		}
	}
	return out
}
