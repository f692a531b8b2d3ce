package clusterdns

import (
	"testing"

	"github.com/miekg/dns"
)

// FuzzRespond feeds wire-format messages to the query handler as the server
// does (unpack, Respond). Whatever the bytes, a message that unpacks gets a
// response that packs, carries its id, is a response, never offers
// recursion, fits the client's UDP size when asked over UDP, and has data
// only for a NOERROR answer to one IN/ANY question in the zones.
func FuzzRespond(f *testing.F) {
	for _, q := range specQueries {
		wire, err := ask(q.name, q.qtype).Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(wire, true)
	}
	edns := ask("_pg._tcp.db.demo.svc.cluster.local.", dns.TypeSRV)
	edns.SetEdns0(600, true)
	wire, _ := edns.Pack()
	f.Add(wire, true)
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, false)
	ix := NewIndex("", labObjects())
	f.Fuzz(func(t *testing.T, wire []byte, udp bool) {
		req := new(dns.Msg)
		if err := req.Unpack(wire); err != nil {
			return // the server drops what does not unpack (miekg/dns answers FORMERR from the header)
		}
		resp := ix.Respond(req, udp)
		out, err := resp.Pack()
		if err != nil {
			t.Fatalf("response does not pack: %v\n%s", err, resp)
		}
		if resp.Id != req.Id || !resp.Response || resp.RecursionAvailable {
			t.Fatalf("header: id %d (query %d), QR %v, RA %v", resp.Id, req.Id, resp.Response, resp.RecursionAvailable)
		}
		if udp && len(out) > udpSize(req) {
			t.Fatalf("UDP response of %d bytes, client size %d", len(out), udpSize(req))
		}
		if len(resp.Answer) > 0 && resp.Rcode != dns.RcodeSuccess {
			t.Fatalf("answers with rcode %s", dns.RcodeToString[resp.Rcode])
		}
		if resp.Rcode == dns.RcodeSuccess || resp.Rcode == dns.RcodeNameError {
			if len(req.Question) != 1 || ix.zoneOf(asciiLower(req.Question[0].Name)) == "" {
				t.Fatalf("rcode %s for a query outside the zones: %v", dns.RcodeToString[resp.Rcode], req.Question)
			}
			if !resp.Truncated && len(resp.Answer) == 0 && len(resp.Ns) != 1 {
				t.Fatalf("NXDOMAIN/NODATA without the SOA: %s", resp)
			}
		}
		again := new(dns.Msg)
		if err := again.Unpack(out); err != nil {
			t.Fatalf("response does not unpack: %v", err)
		}
	})
}
