package graph

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/netns/topology"
)

// FuzzRender parses any lab document, gives each node a pod whose name and
// address come from the fuzzer, and renders the graph in every format: the
// SVG is always one well-formed XML document naming every host, DOT and
// Mermaid are never empty, and nothing panics. A pod the planner refuses
// must be refused by Build with an error, not drawn.
func FuzzRender(f *testing.F) {
	shipped, err := filepath.Glob("../../../clusters/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range shipped {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), "web-1", byte(2))
		f.Add(strings.Replace(string(data), "cni: ", "cni: calico-proxyarp #", 1), "db.v2", byte(7))
	}
	ipv6, err := os.ReadFile("testdata/ipv6.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(ipv6), "web-1", byte(3))
	f.Add(strings.Replace(string(ipv6), "cni: flannel-vxlan", "cni: calico-proxyarp", 1), "db:v6", byte(5))
	f.Add("kind: Lab\n", "x", byte(0))
	f.Add(`apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: a}
spec:
  cni: canal
  podSubnet: 10.1.0.0/16
  serviceSubnet: 10.2.0.0/16
  nodes:
  - {name: n-1, ip: 10.0.0.1/29, podCIDR: 10.1.1.0/29}
  - {name: n-2, ip: 10.0.1.1/24, podCIDR: 10.1.2.0/24}
  - {name: n-3, ip: 10.0.2.1/24, podCIDR: 10.1.3.0/24}
  clients:
  - {name: c, ip: 10.0.3.1/24}
  - {name: d, ip: 10.0.0.2/29}
`, "p<&\">", byte(1))
	f.Fuzz(func(t *testing.T, doc, podName string, hostByte byte) {
		lab, err := topology.Parse([]byte(doc), "f.yaml")
		if err != nil {
			return
		}
		var pods []Pod
		for i, n := range lab.Spec.Nodes {
			pod := Pod{Name: podName + "-" + strings.Repeat("x", i), Node: n.Name, IP: nthAddr(n.PodCIDR, int(hostByte)%8)}
			if len(n.PodCIDRs) > 1 {
				for _, c := range n.PodCIDRs {
					pod.IPs = append(pod.IPs, nthAddr(c, int(hostByte)%8))
				}
			}
			pods = append(pods, pod)
		}
		g, err := Build(lab, pods)
		if err != nil {
			if g != nil {
				t.Fatal("Build gave a graph and an error")
			}
			if g, err = Build(lab, nil); err != nil {
				// The planner's refusal (a lab file Parse accepts but
				// PlanLab does not) is passed on as one error.
				if !strings.HasPrefix(err.Error(), "graph: ") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Build without pods: error %q is not one line starting graph:", err)
				}
				return
			}
		}
		checkRenders(t, g)
	})
}

// nthAddr is the prefix's address n places after its first.
func nthAddr(p netip.Prefix, n int) netip.Addr {
	a := p.Addr()
	for range n {
		a = a.Next()
	}
	return a
}

func checkRenders(t *testing.T, g *Graph) {
	t.Helper()
	for _, f := range Formats() {
		var b bytes.Buffer
		if err := Render(&b, g, Format(f)); err != nil {
			t.Fatal(err)
		}
		if b.Len() == 0 {
			t.Fatalf("%s: empty output", f)
		}
		if f != string(FormatSVG) {
			continue
		}
		text := svgText(t, b.Bytes())
		for _, h := range g.Hosts {
			if !strings.Contains(text, esc(h.Name)) && !strings.Contains(text, h.Name) {
				t.Fatalf("SVG does not name host %q", h.Name)
			}
		}
	}
}

// FuzzRenderNames renders a hand-made graph whose every name comes from the
// fuzzer, bypassing the planner's validation: the renderers alone must keep
// the SVG well-formed and the other outputs non-empty.
func FuzzRenderNames(f *testing.F) {
	f.Add("router", "hosta", "eth0", "web", "10.0.0.1/24")
	f.Add("<r>", "a&b", "\"q\"", "]]>", "10.0.0.1/24")
	f.Add("\x00\xff", "#quot;", "`|`", "\\l\\n", "10.0.0.1/24")
	// IPv6 addresses: colons in every label, and the :: forms.
	f.Add("router", "node:1", "eth0", "web", "fd00::c0a8:1049/116")
	f.Add("r", "n", "flannel-v6.1", "p::1", "fd00:10:244:1::/128")
	f.Add("r", "[n]", "vxlan-v6.calico", "p", "::ffff:10.0.0.1/128")
	f.Add("r", "n", "i", "p", "::/0")
	f.Fuzz(func(t *testing.T, r, node, iface, pod, prefix string) {
		addr, err := netip.ParsePrefix(prefix)
		if err != nil {
			addr = netip.MustParsePrefix("10.0.0.1/24")
		}
		g := &Graph{
			Lab: r + node, CNI: topology.CNI(iface),
			Hosts: []Host{
				{Name: r, Role: RoleRouter, Namespace: r, Interfaces: []Interface{{Name: iface, Kind: IfBridge, Addrs: []netip.Prefix{addr}}, {Name: node, Kind: IfVeth, Master: iface}}},
				{Name: node, Role: RoleNode, Namespace: node, Interfaces: []Interface{{Name: iface, Kind: IfVeth, Addrs: []netip.Prefix{addr}}, {Name: pod, Kind: IfVXLAN, VXLAN: &VXLAN{VNI: 1, Port: 8472}}}},
				{Name: pod, Role: RolePod, Node: node, Namespace: pod, Interfaces: []Interface{{Name: iface, Kind: IfVeth}}},
			},
			Links: []Link{
				{Kind: LinkVeth, A: End{r, node}, B: End{node, iface}},
				{Kind: LinkVeth, A: End{node, iface}, B: End{pod, iface}},
				{Kind: LinkVXLAN, A: End{node, pod}, B: End{node, pod}},
			},
		}
		for _, f := range Formats() {
			var b bytes.Buffer
			if err := Render(&b, g, Format(f)); err != nil {
				t.Fatal(err)
			}
			if b.Len() == 0 {
				t.Fatalf("%s: empty output", f)
			}
			switch Format(f) {
			case FormatSVG:
				if !strings.Contains(svgText(t, b.Bytes()), addr.String()) {
					t.Fatalf("SVG does not show the address %s", addr)
				}
			case FormatDOT, FormatMermaid:
				checkQuotedAddress(t, f, b.String(), addr)
			}
		}
	})
}

// checkQuotedAddress: an address's colons need no escape inside a quoted
// DOT or Mermaid label, so the address appears as it is; and every line
// keeps its quotes paired (an unescaped quote in a name would unpair them;
// DOT escapes with a backslash, Mermaid with #quot;).
func checkQuotedAddress(t *testing.T, format, out string, addr netip.Prefix) {
	t.Helper()
	if !strings.Contains(out, addr.String()) {
		t.Fatalf("%s does not show the address %s", format, addr)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "//") || strings.HasPrefix(line, "%%") {
			continue // the title's comment line, which quotes nothing
		}
		quotes := line
		if Format(format) == FormatDOT {
			quotes = strings.NewReplacer(`\\`, "", `\"`, "").Replace(line)
		}
		if strings.Count(quotes, `"`)%2 != 0 {
			t.Fatalf("%s line with unpaired quotes: %q", format, line)
		}
	}
}
