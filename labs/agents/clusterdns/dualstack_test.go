package clusterdns

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/golden"
)

// dualStack makes svc a dual-stack Service with the ClusterIPs ips,
// primary first, as the API server stores one.
func dualStack(svc *corev1.Service, ips ...string) *corev1.Service {
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ips[0], ips
	policy := corev1.IPFamilyPolicyPreferDualStack
	svc.Spec.IPFamilyPolicy = &policy
	svc.Spec.IPFamilies = nil
	for _, ip := range ips {
		family := corev1.IPv4Protocol
		if strings.Contains(ip, ":") {
			family = corev1.IPv6Protocol
		}
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, family)
	}
	return svc
}

// slice is one EndpointSlice of a Service, of the address type of its
// endpoints' addresses.
func slice(ns, svc, name string, addressType discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := fixtures.NamedEndpointSlice(ns, svc, name, nil, eps...)
	s.AddressType = addressType
	return s
}

// dualStackObjects is a dual-stack lab: kube-dns and web dual-stack
// (IPv4 primary), api single-stack IPv6, legacy single-stack IPv4, and
// the headless db whose pods have an address in each family (db-0 with a
// hostname, the other without), each family in its own EndpointSlice.
func dualStackObjects() Objects {
	http := []corev1.ServicePort{fixtures.TCPServicePort("http", 80)}
	return Objects{
		Serial: 9,
		Services: []*corev1.Service{
			dualStack(fixtures.Service("kube-system", "kube-dns", "", []corev1.ServicePort{fixtures.ServicePort("dns", corev1.ProtocolUDP, 53, 0)}),
				"10.96.0.10", "fd00:10:96::a"),
			dualStack(fixtures.Service("default", "web", "", http), "10.96.0.11", "fd00:10:96::b"),
			fixtures.Service("default", "api", "fd00:10:96::c", http, fixtures.SingleStackIPv6),
			fixtures.Service("default", "legacy", "10.96.0.12", http),
			dualStack(fixtures.Service("demo", "db", corev1.ClusterIPNone, []corev1.ServicePort{fixtures.TCPServicePort("pg", 5432)}), corev1.ClusterIPNone),
		},
		EndpointSlices: []*discoveryv1.EndpointSlice{
			slice("kube-system", "kube-dns", "kube-dns-v4", discoveryv1.AddressTypeIPv4, fixtures.Endpoint("10.244.1.2", "")),
			slice("kube-system", "kube-dns", "kube-dns-v6", discoveryv1.AddressTypeIPv6, fixtures.Endpoint("fd00:10:244:1::2", "")),
			slice("default", "web", "web-v4", discoveryv1.AddressTypeIPv4, fixtures.Endpoint("10.244.1.3", "")),
			slice("default", "web", "web-v6", discoveryv1.AddressTypeIPv6, fixtures.Endpoint("fd00:10:244:1::3", "")),
			slice("default", "api", "api-v6", discoveryv1.AddressTypeIPv6, fixtures.Endpoint("fd00:10:244:2::7", "")),
			slice("demo", "db", "db-v4", discoveryv1.AddressTypeIPv4,
				fixtures.Endpoint("10.244.1.4", "", fixtures.Hostname("db-0")), fixtures.Endpoint("10.244.2.3", ""),
				// a slice's address of the other family is not published
				fixtures.Endpoint("fd00:10:244:9::9", "")),
			slice("demo", "db", "db-v6", discoveryv1.AddressTypeIPv6,
				fixtures.Endpoint("fd00:10:244:1::4", "", fixtures.Hostname("db-0")), fixtures.Endpoint("fd00:10:244:2::3", ""),
				fixtures.Endpoint("10.244.9.9", "")),
		},
	}
}

// dualStackQueries are the questions of a dual-stack lab, each with its
// rcode and the answer section's records (the whole answers are golden).
var dualStackQueries = []struct {
	name   string
	qtype  uint16
	rcode  int
	answer []string
}{
	{"web.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"10.96.0.11"}},
	{"web.default.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"fd00:10:96::b"}},
	{"web.default.svc.cluster.local.", dns.TypeANY, dns.RcodeSuccess, []string{"10.96.0.11", "fd00:10:96::b"}},
	{"api.default.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"fd00:10:96::c"}},
	{"api.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, nil},       // NODATA: IPv6 only
	{"legacy.default.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, nil}, // NODATA: IPv4 only
	{"legacy.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"10.96.0.12"}},
	{"_http._tcp.web.default.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, []string{"0 50 80 web.default.svc.cluster.local."}},
	{"_http._tcp.api.default.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, []string{"0 100 80 api.default.svc.cluster.local."}},
	{reverse("fd00:10:96::b"), dns.TypePTR, dns.RcodeSuccess, []string{"web.default.svc.cluster.local."}},
	{"11.0.96.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, []string{"web.default.svc.cluster.local."}},
	{reverse("fd00:10:244:1::3"), dns.TypePTR, dns.RcodeSuccess, []string{"fd00-10-244-1--3.web.default.svc.cluster.local."}},
	{reverse("fd00:10:244:1::f"), dns.TypePTR, dns.RcodeNameError, nil},
	{"db.demo.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"10.244.2.3", "10.244.1.4"}}, // by name: 10-244-2-3, db-0
	{"db.demo.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"fd00:10:244:1::4", "fd00:10:244:2::3"}},
	{"db-0.db.demo.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"10.244.1.4"}},
	{"db-0.db.demo.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"fd00:10:244:1::4"}},
	{"fd00-10-244-2--3.db.demo.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"fd00:10:244:2::3"}},
	{"fd00-10-244-2--3.db.demo.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, nil},
	{"10-244-2-3.db.demo.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, nil},
	{"fd00-10-244-9--9.db.demo.svc.cluster.local.", dns.TypeAAAA, dns.RcodeNameError, nil}, // in the IPv4 slice: not published
	// db-0's two addresses are one target; the other pod's are two.
	{"_pg._tcp.db.demo.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, []string{
		"0 25 5432 10-244-2-3.db.demo.svc.cluster.local.", "0 25 5432 db-0.db.demo.svc.cluster.local.", "0 25 5432 fd00-10-244-2--3.db.demo.svc.cluster.local."}},
	{"fd00-10-244-1--5.demo.pod.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"fd00:10:244:1::5"}},
	{"fd00-10-244-1--5.demo.pod.cluster.local.", dns.TypeA, dns.RcodeSuccess, nil},
	{"10-244-1-5.demo.pod.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, nil},
	{"fd00-10-244-1-0-0-0-5.demo.pod.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"fd00:10:244:1::5"}},
	{"--ffff-a0a-a0a.demo.pod.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"10.10.10.10"}},
	{"fd00-zz--1.demo.pod.cluster.local.", dns.TypeAAAA, dns.RcodeNameError, nil},
	{"ns.dns.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"fd00:10:96::a"}},
	{"cluster.local.", dns.TypeNS, dns.RcodeSuccess, []string{"ns.dns.cluster.local."}},
}

// reverse is an address's in-addr.arpa or ip6.arpa name.
func reverse(ip string) string {
	name, err := dns.ReverseAddr(ip)
	if err != nil {
		panic(err)
	}
	return name
}

// TestDualStack asks a dual-stack lab's questions: each rcode and answer
// section as listed, NODATA and NXDOMAIN with the zone's SOA, then every
// whole response against testdata/dualstack.golden.
func TestDualStack(t *testing.T) {
	ix := NewIndex("", dualStackObjects())
	var all strings.Builder
	for _, q := range dualStackQueries {
		resp := ix.Respond(ask(q.name, q.qtype), false)
		what := fmt.Sprintf("%s %s", q.name, dns.TypeToString[q.qtype])
		if resp.Rcode != q.rcode {
			t.Errorf("%s: rcode %s, want %s", what, dns.RcodeToString[resp.Rcode], dns.RcodeToString[q.rcode])
		}
		if got := rdata(resp.Answer); strings.Join(got, ", ") != strings.Join(q.answer, ", ") {
			t.Errorf("%s: answer %q, want %q", what, got, q.answer)
		}
		if len(resp.Answer) == 0 && (len(resp.Ns) != 1 || resp.Ns[0].Header().Rrtype != dns.TypeSOA) {
			t.Errorf("%s: no answer and authority %v, want the zone's SOA", what, resp.Ns)
		}
		if _, err := resp.Pack(); err != nil {
			t.Errorf("%s: the response does not pack: %v", what, err)
		}
		fmt.Fprintf(&all, "### %s\n%s\n", what, resp)
	}
	golden.Check(t, "dualstack.golden", []byte(all.String()))
}

// rdata is each record's data as dig +short prints it.
func rdata(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		full := rr.String()
		h := rr.Header().String()
		out = append(out, strings.TrimSpace(strings.TrimPrefix(full, h)))
	}
	return out
}

// TestDualStackSRVAdditional: an SRV answer carries each target's
// addresses in both families, and each target resolves on its own to
// the same addresses.
func TestDualStackSRVAdditional(t *testing.T) {
	ix := NewIndex("", dualStackObjects())
	for _, c := range []struct {
		name  string
		extra []string
	}{
		{"_http._tcp.web.default.svc.cluster.local.", []string{"10.96.0.11", "fd00:10:96::b"}},
		{"_pg._tcp.db.demo.svc.cluster.local.", []string{"10.244.2.3", "10.244.1.4", "fd00:10:244:1::4", "fd00:10:244:2::3"}},
	} {
		resp := ix.Respond(ask(c.name, dns.TypeSRV), false)
		if got := rdata(resp.Extra); strings.Join(got, ", ") != strings.Join(c.extra, ", ") {
			t.Errorf("%s: additional %q, want %q", c.name, got, c.extra)
		}
		for _, rr := range resp.Answer {
			target := rr.(*dns.SRV).Target
			var addrs []string
			for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
				addrs = append(addrs, rdata(ix.Respond(ask(target, qtype), false).Answer)...)
			}
			for _, a := range addrs {
				if !slices.Contains(c.extra, a) {
					t.Errorf("SRV target %s resolves to %s, which the additional section %q lacks", target, a, c.extra)
				}
			}
			if len(addrs) == 0 {
				t.Errorf("SRV target %s resolves to nothing", target)
			}
		}
	}
}

// TestIPv6PTRRoundTrip: the name an ip6.arpa PTR gives for an address
// resolves (AAAA) to it.
func TestIPv6PTRRoundTrip(t *testing.T) {
	ix := NewIndex("", dualStackObjects())
	for _, ip := range []string{"fd00:10:96::a", "fd00:10:96::b", "fd00:10:96::c", "fd00:10:244:1::4", "fd00:10:244:2::3", "fd00:10:244:2::7"} {
		rev, _ := dns.ReverseAddr(ip)
		ptr := ix.Respond(ask(rev, dns.TypePTR), false)
		if len(ptr.Answer) != 1 {
			t.Errorf("PTR %s: %v", ip, ptr.Answer)
			continue
		}
		name := ptr.Answer[0].(*dns.PTR).Ptr
		aaaa := ix.Respond(ask(name, dns.TypeAAAA), false)
		found := false
		for _, rr := range aaaa.Answer {
			got, _ := netip.AddrFromSlice(rr.(*dns.AAAA).AAAA)
			found = found || got == netip.MustParseAddr(ip)
		}
		if !found {
			t.Errorf("PTR %s gives %s, which resolves to %v", ip, name, aaaa.Answer)
		}
	}
}
