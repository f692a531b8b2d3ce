package dnslookup

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// zone is a tiny cluster DNS: web (a dual-stack ClusterIP), legacy (an
// IPv4-only one), headless (two endpoints in each family), ext (an
// ExternalName's CNAME) in namespace demo; everything else in
// cluster.local is NXDOMAIN, and anything outside it REFUSED, as the lab's
// server answers.
var zone = map[string][]dns.RR{
	"web.demo.svc.cluster.local.":    {mustRR("web.demo.svc.cluster.local. 5 IN A 10.96.0.11"), mustRR("web.demo.svc.cluster.local. 5 IN AAAA fd00:10:96::b")},
	"legacy.demo.svc.cluster.local.": {mustRR("legacy.demo.svc.cluster.local. 5 IN A 10.96.0.12")},
	"headless.demo.svc.cluster.local.": {mustRR("headless.demo.svc.cluster.local. 5 IN A 10.244.1.4"), mustRR("headless.demo.svc.cluster.local. 5 IN A 10.244.1.3"),
		mustRR("headless.demo.svc.cluster.local. 5 IN AAAA fd00:10:244:1::4"), mustRR("headless.demo.svc.cluster.local. 5 IN AAAA fd00:10:244:1::3")},
	"ext.demo.svc.cluster.local.": {mustRR("ext.demo.svc.cluster.local. 5 IN CNAME foo.example.com.")},
}

func mustRR(s string) dns.RR {
	rr, err := dns.NewRR(s)
	if err != nil {
		panic(err)
	}
	return rr
}

// serve starts the zone's server on a loopback UDP port and returns a
// resolver configuration of a pod in namespace demo that uses it.
func serve(t *testing.T) *dns.ClientConfig {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		r := new(dns.Msg).SetReply(q)
		name := q.Question[0].Name
		switch rrs, ok := zone[name]; {
		case !strings.HasSuffix(name, ".cluster.local."):
			r.Rcode = dns.RcodeRefused
		case !ok:
			r.Rcode = dns.RcodeNameError
		default:
			for _, rr := range rrs {
				if rr.Header().Rrtype == q.Question[0].Qtype {
					r.Answer = append(r.Answer, rr)
				}
			}
		}
		_ = w.WriteMsg(r)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	host, port, _ := net.SplitHostPort(pc.LocalAddr().String())
	return &dns.ClientConfig{Servers: []string{host}, Port: port, Ndots: 5,
		Search: []string{"demo.svc.cluster.local", "svc.cluster.local", "cluster.local"}}
}

func TestLookupFollowsTheSearchListAndAsksTheGivenType(t *testing.T) {
	conf := serve(t)
	for _, tt := range []struct {
		name, qtype, answered string
		want                  []string
	}{
		{"web", "A", "web.demo.svc.cluster.local.", []string{"10.96.0.11"}},
		{"headless", "a", "headless.demo.svc.cluster.local.", []string{"10.244.1.4", "10.244.1.3"}},
		{"ext", "CNAME", "ext.demo.svc.cluster.local.", []string{"foo.example.com."}},
		{"ext.demo.svc.cluster.local.", "A", "ext.demo.svc.cluster.local.", []string{}}, // NODATA: the CNAME is not an A record, and is not chased
		{"web.demo", "A", "web.demo.svc.cluster.local.", []string{"10.96.0.11"}},
		{"web", "AAAA", "web.demo.svc.cluster.local.", []string{"fd00:10:96::b"}},
		{"headless", "aaaa", "headless.demo.svc.cluster.local.", []string{"fd00:10:244:1::4", "fd00:10:244:1::3"}},
		{"legacy", "AAAA", "legacy.demo.svc.cluster.local.", []string{}}, // NODATA: IPv4 only
	} {
		got, err := LookupWith(context.Background(), conf, tt.name, tt.qtype)
		if err != nil {
			t.Errorf("%s %s: %v", tt.qtype, tt.name, err)
			continue
		}
		if got.Name != tt.answered || !slices.Equal(got.Values(), tt.want) {
			t.Errorf("%s %s = %+v, want %v from %s", tt.qtype, tt.name, got, tt.want, tt.answered)
		}
	}
}

func TestLookupSaysWhyNothingAnswered(t *testing.T) {
	conf := serve(t)
	for _, tt := range []struct{ name, qtype, want string }{
		{"nope", "A", "REFUSED"}, // NXDOMAIN in every search domain, then "nope." outside the zone
		{"web", "MX", `query type "MX"`},
	} {
		_, err := LookupWith(context.Background(), conf, tt.name, tt.qtype)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s: error %v, want one containing %q", tt.qtype, tt.name, err, tt.want)
		}
	}
	if _, err := LookupWith(context.Background(), &dns.ClientConfig{Ndots: 1}, "web", "A"); err == nil || !strings.Contains(err.Error(), "no server") {
		t.Errorf("no server: error %v", err)
	}
}
