package clusterdns

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/golden"
)

// query is one question and what the specification says of its answer.
type query struct {
	name  string
	qtype uint16
	rcode int
	// answers is the number of answer records (-1: do not check).
	answers int
}

// specQueries walk the specification's records (sections in comments) and
// the error cases, on labObjects.
var specQueries = []query{
	{"dns-version.cluster.local.", dns.TypeTXT, dns.RcodeSuccess, 1},                  // 2.2
	{"web.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 1},                // 2.3.1
	{"WEB.Default.SVC.cluster.LOCAL.", dns.TypeA, dns.RcodeSuccess, 1},                // 2.1: case-insensitive
	{"web.default.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, 0},             // NODATA: IPv4 only
	{"_http._tcp.web.default.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, 1},   // 2.3.2
	{"_http._udp.web.default.svc.cluster.local.", dns.TypeSRV, dns.RcodeNameError, 0}, // no such port
	{"_dns._udp.kube-dns.kube-system.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, 1},
	{"_dns-tcp._tcp.kube-dns.kube-system.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, 1},
	{"11.0.96.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, 1},            // 2.3.3
	{"db.demo.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 2},            // 2.4.1: ready endpoints only
	{"db-0.db.demo.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 1},       // 2.4.1: hostname
	{"10-244-2-3.db.demo.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 1}, // system-assigned hostname
	{"db-2.db.demo.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, 0},     // not ready
	{"_pg._tcp.db.demo.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, 2}, // 2.4.2
	{"4.1.244.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, 1},            // 2.4.3
	{"peers.demo.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 1},         // publishNotReadyAddresses
	{"_gossip._udp.peers.demo.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, 1},
	{"nobody.demo.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, 0}, // 2.4.1: no ready endpoints
	{"search.demo.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 1},   // 2.5: CNAME
	{"search.demo.svc.cluster.local.", dns.TypeCNAME, dns.RcodeSuccess, 1},
	{"10-244-9-9.demo.pod.cluster.local.", dns.TypeA, dns.RcodeSuccess, 1}, // 2.6
	{"10-244-9.demo.pod.cluster.local.", dns.TypeA, dns.RcodeNameError, 0},
	{"2.1.244.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, 1}, // kube-dns's endpoint
	{"3.1.244.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, 1}, // a ClusterIP Service's endpoint
	{"9.9.9.9.in-addr.arpa.", dns.TypePTR, dns.RcodeNameError, 0},
	{"missing.default.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, 0},
	{"web.default.svc.cluster.local.default.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, 0}, // a search-path try
	{"default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 0},                                 // NODATA: the namespace exists
	{"svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 0},
	{"cluster.local.", dns.TypeSOA, dns.RcodeSuccess, 1},
	{"cluster.local.", dns.TypeNS, dns.RcodeSuccess, 1},
	{"ns.dns.cluster.local.", dns.TypeA, dns.RcodeSuccess, 1},
	{"cluster.local.", dns.TypeAXFR, dns.RcodeRefused, 0},
	{"example.com.", dns.TypeA, dns.RcodeRefused, 0}, // no forwarding
	{"localcluster.local.", dns.TypeA, dns.RcodeRefused, 0},
}

func ask(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.Id = 4242
	return m
}

// TestSpecification checks each query's rcode, answer count and the
// header bits every answer of the zone has, then compares every whole
// response with testdata/answers.golden.
func TestSpecification(t *testing.T) {
	ix := NewIndex("", labObjects())
	var all strings.Builder
	for _, q := range specQueries {
		resp := ix.Respond(ask(q.name, q.qtype), false)
		what := fmt.Sprintf("%s %s", q.name, dns.TypeToString[q.qtype])
		if resp.Id != 4242 || !resp.Response {
			t.Errorf("%s: id %d response %v, want the query's id and QR set", what, resp.Id, resp.Response)
		}
		if resp.Rcode != q.rcode {
			t.Errorf("%s: rcode %s, want %s", what, dns.RcodeToString[resp.Rcode], dns.RcodeToString[q.rcode])
		}
		if q.answers >= 0 && len(resp.Answer) != q.answers {
			t.Errorf("%s: %d answers, want %d:\n%s", what, len(resp.Answer), q.answers, resp)
		}
		if resp.RecursionAvailable {
			t.Errorf("%s: RA set: the server does not recurse", what)
		}
		if resp.Rcode != dns.RcodeRefused {
			if !resp.Authoritative {
				t.Errorf("%s: AA not set", what)
			}
			// NXDOMAIN and NODATA carry the zone's SOA (RFC 2308).
			if len(resp.Answer) == 0 && (len(resp.Ns) != 1 || resp.Ns[0].Header().Rrtype != dns.TypeSOA) {
				t.Errorf("%s: no answer and authority %v, want the zone's SOA", what, resp.Ns)
			}
		}
		if _, err := resp.Pack(); err != nil {
			t.Errorf("%s: the response does not pack: %v", what, err)
		}
		fmt.Fprintf(&all, "### %s\n%s\n", what, resp)
	}
	golden.Check(t, "answers.golden", []byte(all.String()))
}

// TestSRVTargetsResolve: every SRV answer comes with the A records of its
// targets, and each target resolves to the same address on its own.
func TestSRVTargetsResolve(t *testing.T) {
	ix := NewIndex("", labObjects())
	resp := ix.Respond(ask("_pg._tcp.db.demo.svc.cluster.local.", dns.TypeSRV), false)
	if len(resp.Extra) != 2 {
		t.Fatalf("additional section %v, want the A records of db-0 and 10-244-2-3", resp.Extra)
	}
	for _, rr := range resp.Answer {
		target := rr.(*dns.SRV).Target
		a := ix.Respond(ask(target, dns.TypeA), false)
		if len(a.Answer) != 1 {
			t.Errorf("SRV target %s: %d A records, want 1", target, len(a.Answer))
		}
	}
}

// TestPTRRoundTrip: the name a PTR gives for an address resolves to it.
func TestPTRRoundTrip(t *testing.T) {
	ix := NewIndex("", labObjects())
	for _, ip := range []string{"10.96.0.10", "10.96.0.11", "10.244.1.4", "10.244.2.3", "10.244.1.3"} {
		rev, _ := dns.ReverseAddr(ip)
		ptr := ix.Respond(ask(rev, dns.TypePTR), false)
		if len(ptr.Answer) != 1 {
			t.Errorf("PTR %s: %v", ip, ptr.Answer)
			continue
		}
		name := ptr.Answer[0].(*dns.PTR).Ptr
		a := ix.Respond(ask(name, dns.TypeA), false)
		if len(a.Answer) == 0 || a.Answer[0].(*dns.A).A.String() != ip {
			t.Errorf("PTR %s gives %s, which resolves to %v", ip, name, a.Answer)
		}
	}
}

// TestMalformedQueries: what is not one plain query is refused or answered
// with FORMERR/NOTIMP, never with data.
func TestMalformedQueries(t *testing.T) {
	ix := NewIndex("", labObjects())
	two := ask("web.default.svc.cluster.local.", dns.TypeA)
	two.Question = append(two.Question, two.Question[0])
	notify := ask("cluster.local.", dns.TypeSOA)
	notify.Opcode = dns.OpcodeNotify
	isResponse := ask("web.default.svc.cluster.local.", dns.TypeA)
	isResponse.Response = true
	chaos := ask("web.default.svc.cluster.local.", dns.TypeA)
	chaos.Question[0].Qclass = dns.ClassCHAOS
	for _, c := range []struct {
		what  string
		req   *dns.Msg
		rcode int
	}{
		{"two questions", two, dns.RcodeFormatError},
		{"no question", &dns.Msg{MsgHdr: dns.MsgHdr{Id: 1}}, dns.RcodeFormatError},
		{"NOTIFY", notify, dns.RcodeNotImplemented},
		{"a response", isResponse, dns.RcodeFormatError},
		{"class CH", chaos, dns.RcodeRefused},
	} {
		resp := ix.Respond(c.req, true)
		if resp.Rcode != c.rcode || len(resp.Answer) != 0 {
			t.Errorf("%s: rcode %s with %d answers, want %s and none", c.what, dns.RcodeToString[resp.Rcode], len(resp.Answer), dns.RcodeToString[c.rcode])
		}
	}
}

// TestTruncation: over UDP an answer larger than the client's buffer is
// cut and marked TC; over TCP it is whole.
func TestTruncation(t *testing.T) {
	objs := labObjects()
	var eps []string
	for i := 0; i < 100; i++ {
		eps = append(eps, fmt.Sprintf("10.244.3.%d", i+2))
	}
	objs.Services = append(objs.Services, fixtures.Service("demo", "big", "None", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)}))
	s := fixtures.EndpointSlice("demo", "big", nil)
	for _, ip := range eps {
		s.Endpoints = append(s.Endpoints, fixtures.Endpoint(ip, ""))
	}
	objs.EndpointSlices = append(objs.EndpointSlices, s)
	ix := NewIndex("", objs)
	udp := ix.Respond(ask("big.demo.svc.cluster.local.", dns.TypeA), true)
	wire, _ := udp.Pack()
	if !udp.Truncated || len(wire) > minUDPSize {
		t.Errorf("UDP answer of 100 A records: TC %v, %d bytes; want TC and at most %d", udp.Truncated, len(wire), minUDPSize)
	}
	edns := ask("big.demo.svc.cluster.local.", dns.TypeA)
	edns.SetEdns0(4096, false)
	big := ix.Respond(edns, true)
	wire, _ = big.Pack()
	if len(wire) > serverUDPSize || big.IsEdns0() == nil {
		t.Errorf("EDNS answer: %d bytes (at most %d), OPT %v", len(wire), serverUDPSize, big.IsEdns0())
	}
	tcp := ix.Respond(ask("big.demo.svc.cluster.local.", dns.TypeA), false)
	if tcp.Truncated || len(tcp.Answer) != 100 {
		t.Errorf("TCP answer: TC %v, %d records; want all 100", tcp.Truncated, len(tcp.Answer))
	}
}
