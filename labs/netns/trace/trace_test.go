package trace

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/labs/agents/conntrack"
)

// loadCapture reads testdata/NAME.capture.json.
func loadCapture(t *testing.T, name string) *Capture {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".capture.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c Capture
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// golden compares got with testdata/file, or rewrites it under -update.
func checkGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	golden.Check(t, file, got)
}

// TestGoldenOutputs analyses each capture in testdata and compares the
// whole text, JSON and SVG output with its golden file.
func TestGoldenOutputs(t *testing.T) {
	files, err := filepath.Glob("testdata/*.capture.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in testdata: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".capture.json")
		t.Run(name, func(t *testing.T) {
			r, err := Analyze(loadCapture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range Formats() {
				var b bytes.Buffer
				if err := Render(&b, r, Format(format)); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, name+"."+format+".golden", b.Bytes())
				if format == "svg" {
					assertSVG(t, b.Bytes(), hostNames(r))
					if name == "nodeport-canal" { // the README's picture
						checkGolden(t, "../../../../docs/trace-nodeport.svg", b.Bytes())
					}
				}
			}
		})
	}
}

func hostNames(r *Result) []string {
	var out []string
	for _, h := range r.Hops {
		out = append(out, h.Host)
	}
	return out
}

// assertSVG checks that the picture is one well-formed XML document whose
// root is <svg> and that it names every host.
func assertSVG(t *testing.T, data []byte, names []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var root string
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			text.Write(tok)
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	for _, n := range names {
		if !strings.Contains(text.String(), n) {
			t.Errorf("the SVG does not name host %s", n)
		}
	}
}

// TestNodePortAcrossNodes is the acceptance on a capture from a
// canal lab: the client opens HOSTA's NodePort, the pod is on HOSTB.
func TestNodePortAcrossNodes(t *testing.T) {
	r, err := Analyze(loadCapture(t, "nodeport-canal"))
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary
	if !strings.HasPrefix(s.ConfirmedSEP, "KUBE-SEP-") || s.Endpoint != netip.MustParseAddrPort("10.100.81.180:3000") {
		t.Errorf("confirmed SEP %q endpoint %s, want a KUBE-SEP chain DNATing to 10.100.81.180:3000", s.ConfirmedSEP, s.Endpoint)
	}
	if s.Masquerade != netip.MustParseAddr("10.100.40.0") || s.MasqueradeOn != "hosta" {
		t.Errorf("masquerade %s on %s, want 10.100.40.0 (hosta's flannel.1) on hosta", s.Masquerade, s.MasqueradeOn)
	}
	if len(s.VXLAN) != 1 || s.VXLAN[0].From != "hosta" || s.VXLAN[0].To != "hostb" || s.VXLAN[0].Remote != netip.MustParseAddr("192.168.16.139") {
		t.Errorf("VXLAN hops %+v, want one hosta → hostb to 192.168.16.139", s.VXLAN)
	}
	var hasSVC, hasEXT bool
	for _, c := range s.ServiceChains {
		hasSVC = hasSVC || strings.HasPrefix(c, "KUBE-SVC-")
		hasEXT = hasEXT || strings.HasPrefix(c, "KUBE-EXT-")
	}
	if !hasSVC || !hasEXT {
		t.Errorf("service chains %v, want a KUBE-SVC- and a KUBE-EXT- chain", s.ServiceChains)
	}
	if want := []string{"client", "router", "hosta", "hostb"}; len(r.Hops) != 5 || hostNames(r)[0] != want[0] || hostNames(r)[3] != want[3] || !strings.HasPrefix(s.Reached, "httpserver-") {
		t.Errorf("path %v reached %q, want client, router, hosta, hostb, the httpserver pod", hostNames(r), s.Reached)
	}
}

// TestCountersMustGrow: a reading where nothing changed matches nothing,
// and a chain rewritten in between (or whose counters went down) is
// reported as not compared instead of matched.
func TestCountersMustGrow(t *testing.T) {
	before := "*nat\n:PREROUTING ACCEPT [5:300]\n:KUBE-X - [0:0]\n[3:180] -A PREROUTING -j KUBE-X\n[3:180] -A KUBE-X -j RETURN\nCOMMIT\n"
	b, err := ParseSave(before)
	if err != nil {
		t.Fatal(err)
	}
	if hits, changed := Diff(b, b); len(hits) != 0 || len(changed) != 0 {
		t.Errorf("same reading twice: hits %v changed %v", hits, changed)
	}
	after := strings.Replace(before, "[3:180] -A KUBE-X -j RETURN", "[0:0] -A KUBE-X -j RETURN", 1)
	after = strings.Replace(after, "[3:180] -A PREROUTING", "[4:240] -A PREROUTING", 1)
	a, err := ParseSave(after)
	if err != nil {
		t.Fatal(err)
	}
	hits, changed := Diff(b, a)
	if len(hits) != 1 || hits[0].Chain != "PREROUTING" || hits[0].Delta != 1 || len(changed) != 1 || changed[0] != "nat KUBE-X" {
		t.Errorf("hits %+v changed %v, want PREROUTING +1 and KUBE-X not compared", hits, changed)
	}
}

func TestParseSaveRefuses(t *testing.T) {
	for _, bad := range []string{
		"[1:2] -A X -j Y\n",                     // outside a table
		"*nat\n[1:2] -A X -j Y\nCOMMIT\n",       // undeclared chain
		"*nat\n:X - [a:b]\nCOMMIT\n",            // bad counters
		"*nat\n:X - [0:0]\n-A X -j Y\nCOMMIT\n", // no counters
		"*nat\n:X - [0:0]\n",                    // no COMMIT
	} {
		if _, err := ParseSave(bad); err == nil {
			t.Errorf("ParseSave(%q) accepted it", bad)
		}
	}
}

// FuzzParseSave: ParseSave never panics, and a parsed table diffed with
// itself matches nothing and changes nothing; every rule it reads has a
// chain it declared.
func FuzzParseSave(f *testing.F) {
	c := func() *Capture {
		data, err := os.ReadFile("testdata/nodeport-canal.capture.json")
		if err != nil {
			f.Fatal(err)
		}
		var c Capture
		if err := json.Unmarshal(data, &c); err != nil {
			f.Fatal(err)
		}
		return &c
	}()
	for _, h := range c.Hosts {
		for _, t := range h.Tables {
			f.Add(t.Before)
		}
	}
	f.Add("*nat\n:PREROUTING ACCEPT [1:2]\n[3:4] -A PREROUTING -j DNAT --to-destination 1.2.3.4:80\nCOMMIT\n")
	f.Fuzz(func(t *testing.T, text string) {
		tables, err := ParseSave(text)
		if err != nil {
			return
		}
		for _, tb := range tables {
			declared := map[string]bool{}
			for _, ch := range tb.Chains {
				declared[ch] = true
			}
			for _, r := range tb.Rules {
				if !declared[r.Chain] {
					t.Fatalf("rule of undeclared chain %q", r.Chain)
				}
			}
		}
		if hits, changed := Diff(tables, tables); len(hits) != 0 || len(changed) != 0 {
			t.Fatalf("a reading diffed with itself: hits %v changed %v", hits, changed)
		}
		orderHits(nil)
	})
}

// TestIPVSRealServer: in IPVS mode the real server named is conntrack's
// endpoint when the virtual server lists it, and a note says so when not.
func TestIPVSRealServer(t *testing.T) {
	for _, tc := range []struct {
		real     []string
		want     string
		wantNote bool
	}{
		{[]string{"10.100.40.7:3000", "10.100.81.180:3000"}, "10.100.81.180:3000", false},
		{[]string{"10.100.40.7:3000"}, "", true},
	} {
		c := loadCapture(t, "nodeport-canal")
		c.ProxyMode = "ipvs"
		c.Hosts[2].IPVS = &IPVSService{Virtual: "TCP 192.168.16.73:30000 rr", RealServers: tc.real}
		r, err := Analyze(c)
		if err != nil {
			t.Fatal(err)
		}
		h := r.Hops[2]
		noted := false
		for _, n := range h.Notes {
			noted = noted || strings.Contains(n, "is not a real server of TCP 192.168.16.73:30000 rr")
		}
		if h.RealServer != tc.want || r.Summary.RealServer != tc.want || noted != tc.wantNote {
			t.Errorf("real servers %v: named %q (summary %q), notes %v; want %q", tc.real, h.RealServer, r.Summary.RealServer, h.Notes, tc.want)
		}
	}
}

// TestIPVSRewriteWithoutDNATBit: IPVS leaves conntrack's DNAT bit unset
// (seen in the VM); the rewrite is read from the tuples and credited to
// the virtual server whose real server conntrack names.
func TestIPVSRewriteWithoutDNATBit(t *testing.T) {
	c := loadCapture(t, "nodeport-canal")
	c.ProxyMode = "ipvs"
	hosta := &c.Hosts[2]
	hosta.Tables = nil
	hosta.Conntrack.Status &^= conntrack.StatusDstNAT
	hosta.IPVS = &IPVSService{Virtual: "TCP 192.168.16.73:30000 rr", RealServers: []string{"10.100.81.180:3000"}}
	r, err := Analyze(c)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Hops[2]
	if h.DNAT == nil || h.DNAT.To.String() != "10.100.81.180:3000" || h.DNAT.By != "IPVS TCP 192.168.16.73:30000 rr" || r.Summary.RealServer != "10.100.81.180:3000" {
		t.Errorf("DNAT %+v real server %q, want 10.100.81.180:3000 by the IPVS virtual server", h.DNAT, r.Summary.RealServer)
	}
	if r.Summary.ConfirmedSEP != "" {
		t.Errorf("confirmed SEP %q in IPVS mode, want none", r.Summary.ConfirmedSEP)
	}
}
