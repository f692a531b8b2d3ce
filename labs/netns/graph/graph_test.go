package graph

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/labs/netns/topology"
)

// loadCluster reads a shipped lab file (or one of testdata/) with its CNI
// replaced by cni.
func loadCluster(t testing.TB, file string, cni topology.CNI) *topology.Lab {
	t.Helper()
	path := filepath.Join("..", "..", "..", "clusters", file)
	if strings.HasPrefix(file, "testdata/") {
		path = file
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := topology.Parse(data, path)
	if err != nil {
		t.Fatal(err)
	}
	lab.Spec.CNI = cni
	return lab
}

// fixturePods are a couple of pods on each node, addressed as the lab's
// IPAM would (from the third address of each podCIDR); on a dual-stack
// node a pod has the same place in each family's podCIDR.
func fixturePods(lab *topology.Lab) []Pod {
	var pods []Pod
	for i, n := range lab.Spec.Nodes {
		for j := range 2 {
			pod := Pod{Name: "web-" + string(rune('a'+i)) + string(rune('1'+j)), Node: n.Name}
			for _, cidr := range n.PodCIDRs {
				if len(n.PodCIDRs) > 1 {
					pod.IPs = append(pod.IPs, podAddr(cidr, j))
				}
			}
			pod.IP = podAddr(n.PodCIDR, j)
			pods = append(pods, pod)
		}
	}
	return pods
}

// podAddr is the pod range's (third + j)th address.
func podAddr(cidr netip.Prefix, j int) netip.Addr {
	a := cidr.Addr().Next().Next()
	for range j {
		a = a.Next()
	}
	return a
}

func fixtureGraph(t testing.TB, file string, cni topology.CNI) *Graph {
	t.Helper()
	lab := loadCluster(t, file, cni)
	g, err := Build(lab, fixturePods(lab))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// clusterFiles are the labs drawn by the golden tests: shipped IPv4 ones,
// the shipped dual-stack one and an IPv6 one.
var clusterFiles = []string{"nodeport.yaml", "single-node.yaml", "dual-stack.yaml", "testdata/ipv6.yaml"}

// TestGolden compares the whole output of every renderer, for each shipped
// lab file and each CNI, with two pods per node.
func TestGolden(t *testing.T) {
	for _, file := range clusterFiles {
		for _, cni := range topology.CNIs() {
			g := fixtureGraph(t, file, cni)
			for _, f := range Formats() {
				name := strings.TrimSuffix(filepath.Base(file), ".yaml") + "-" + string(cni) + "." + f + ".golden"
				t.Run(name, func(t *testing.T) {
					var b bytes.Buffer
					if err := Render(&b, g, Format(f)); err != nil {
						t.Fatal(err)
					}
					golden.Check(t, name, b.Bytes())
				})
			}
		}
	}
}

// TestSVGNamesEveryHost decodes the whole SVG and finds each host's name,
// each interface's name and each address in its text.
func TestSVGNamesEveryHost(t *testing.T) {
	for _, file := range clusterFiles {
		for _, cni := range topology.CNIs() {
			g := fixtureGraph(t, file, cni)
			var b bytes.Buffer
			if err := WriteSVG(&b, g); err != nil {
				t.Fatal(err)
			}
			text := svgText(t, b.Bytes())
			for _, h := range g.Hosts {
				if !strings.Contains(text, h.Name+" (") {
					t.Errorf("%s %s: SVG does not name host %s", file, cni, h.Name)
				}
				for _, i := range h.Interfaces {
					if !strings.Contains(text, i.Name+" ") {
						t.Errorf("%s %s: SVG does not name %s's interface %s", file, cni, h.Name, i.Name)
					}
					for _, a := range i.Addrs {
						if !strings.Contains(text, a.String()) {
							t.Errorf("%s %s: SVG does not show %s's address %s", file, cni, h.Name, a)
						}
					}
				}
			}
		}
	}
}

// svgText checks that data is one well-formed XML document with an svg
// root and returns all its character data.
func svgText(t testing.TB, data []byte) string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	var text strings.Builder
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, data)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element %v, want svg", tok.Name)
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			text.Write(tok)
			text.WriteByte('\n')
		}
	}
	if roots != 1 || depth != 0 {
		t.Fatalf("SVG has %d root elements, depth %d at the end", roots, depth)
	}
	return text.String()
}

// TestBuildFollowsThePlan checks the facts the plan decides for each CNI:
// a cni0 bridge and veth ports with flannel's attachment, proxy-ARP cali*
// veths with Calico's; flannel.1 or vxlan.calico with their VNI and port;
// one tunnel between the two nodes.
func TestBuildFollowsThePlan(t *testing.T) {
	cases := []struct {
		cni                topology.CNI
		bridge             bool
		vtep               string
		vni, port          int
		podAddr, vethStart string
	}{
		{topology.CNIFlannelVXLAN, true, "flannel.1", 1, 8472, "10.100.40.2/24", "veth"},
		{topology.CNICalicoProxyARP, false, "vxlan.calico", 4096, 4789, "10.100.40.2/32", "cali"},
		{topology.CNICanal, false, "flannel.1", 1, 8472, "10.100.40.2/32", "cali"},
	}
	for _, c := range cases {
		g := fixtureGraph(t, "nodeport.yaml", c.cni)
		hosta, _ := g.Host("hosta")
		_, hasBridge := hosta.Interface("cni0")
		if hasBridge != c.bridge {
			t.Errorf("%s: cni0 on hosta = %v, want %v", c.cni, hasBridge, c.bridge)
		}
		v, ok := hosta.Interface(c.vtep)
		if !ok || v.VXLAN == nil || v.VXLAN.VNI != c.vni || v.VXLAN.Port != c.port || v.VXLAN.Local != netip.MustParseAddr("192.168.16.73") {
			t.Errorf("%s: hosta's VTEP = %+v, want %s VNI %d port %d local 192.168.16.73", c.cni, v, c.vtep, c.vni, c.port)
		}
		pod, _ := g.Host("web-a1")
		eth0, ok := pod.Interface("eth0")
		if !ok || len(eth0.Addrs) != 1 || eth0.Addrs[0].String() != c.podAddr {
			t.Errorf("%s: web-a1's eth0 = %+v, want %s", c.cni, eth0, c.podAddr)
		}
		peer, ok := hosta.Interface(eth0.PeerName)
		if !ok || !strings.HasPrefix(peer.Name, c.vethStart) || peer.ProxyARP == c.bridge || (peer.Master == "cni0") != c.bridge {
			t.Errorf("%s: web-a1's node-side veth = %+v", c.cni, peer)
		}
		tunnels := 0
		for _, l := range g.Links {
			if l.Kind == LinkVXLAN {
				tunnels++
				if l.A.Interface != c.vtep || l.B.Interface != c.vtep {
					t.Errorf("%s: tunnel %+v not between %s devices", c.cni, l, c.vtep)
				}
			}
		}
		if tunnels != 1 {
			t.Errorf("%s: %d tunnels, want 1 between hosta and hostb", c.cni, tunnels)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats() {
		if _, err := ParseFormat(f); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseFormat("png"); err == nil || !strings.Contains(err.Error(), `"png"`) || !strings.Contains(err.Error(), "svg, dot, mermaid") {
		t.Errorf("ParseFormat(png) = %v, want an error naming png and the formats", err)
	}
}

func TestBuildRefusesABadPod(t *testing.T) {
	lab := loadCluster(t, "nodeport.yaml", topology.CNICanal)
	_, err := Build(lab, []Pod{{Name: "web", Node: "hosta", IP: netip.MustParseAddr("10.100.81.5")}})
	if err == nil || !strings.Contains(err.Error(), `"web"`) {
		t.Errorf("Build with a pod outside its node's podCIDR = %v, want an error naming the pod", err)
	}
}

// TestREADMEPictures keeps the README's pictures what svclab draws now:
// docs/graph-nodeport.svg, clusters/nodeport.yaml as shipped (canal) with
// two pods on each node, and docs/graph-single-node.md, the Mermaid
// flowchart of clusters/single-node.yaml (flannel-vxlan) with two pods,
// which GitHub renders. go test -update rewrites them.
func TestREADMEPictures(t *testing.T) {
	for _, c := range []struct {
		cluster, doc string
		write        func(*bytes.Buffer, *Graph) error
	}{
		{"nodeport.yaml", "graph-nodeport.svg", func(b *bytes.Buffer, g *Graph) error { return WriteSVG(b, g) }},
		{"single-node.yaml", "graph-single-node.md", func(b *bytes.Buffer, g *Graph) error {
			b.WriteString("# svclab graph -o mermaid\n\n`svclab graph -o mermaid` of `clusters/single-node.yaml` (flannel-vxlan) with two pods, as GitHub renders it (made by `go test ./labs/netns/graph -update`):\n\n```mermaid\n")
			if err := WriteMermaid(b, g); err != nil {
				return err
			}
			b.WriteString("```\n")
			return nil
		}},
	} {
		path := filepath.Join("..", "..", "..", "docs", c.doc)
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "clusters", c.cluster))
		if err != nil {
			t.Fatal(err)
		}
		lab, err := topology.Parse(data, c.cluster)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Build(lab, fixturePods(lab))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := c.write(&b, g); err != nil {
			t.Fatal(err)
		}
		golden.CheckPath(t, path, b.Bytes())
	}
}
