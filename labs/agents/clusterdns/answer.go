package clusterdns

import (
	"net/netip"
	"strings"

	"github.com/miekg/dns"
)

// Transport sizes: a UDP answer without EDNS fits 512 bytes (RFC 1035); with
// EDNS the server offers 1232 (the DNS flag day 2020 value) and answers at
// most what the client offers, capped by that. TCP answers are not cut.
const (
	minUDPSize    = 512
	serverUDPSize = 1232
)

// Respond answers one query from the index: the whole response message,
// truncated (TC set) to the client's UDP size when udp is true. It never
// returns nil: a query it cannot answer gets FORMERR, NOTIMP or REFUSED.
func (ix *Index) Respond(req *dns.Msg, udp bool) *dns.Msg {
	resp := ix.answer(req)
	if opt := req.IsEdns0(); opt != nil && resp.Rcode != dns.RcodeFormatError {
		resp.SetEdns0(serverUDPSize, false)
	}
	if udp {
		resp.Truncate(udpSize(req))
	}
	return resp
}

func udpSize(req *dns.Msg) int {
	size := minUDPSize
	if opt := req.IsEdns0(); opt != nil {
		size = max(size, min(int(opt.UDPSize()), serverUDPSize))
	}
	return size
}

// answer is Respond before EDNS and truncation.
func (ix *Index) answer(req *dns.Msg) *dns.Msg {
	resp := new(dns.Msg)
	switch {
	case req.Response:
		return reply(resp, req, dns.RcodeFormatError)
	case req.Opcode != dns.OpcodeQuery:
		return reply(resp, req, dns.RcodeNotImplemented)
	case len(req.Question) != 1:
		return reply(resp, req, dns.RcodeFormatError)
	}
	q := req.Question[0]
	qname := dns.Fqdn(q.Name)
	lower := asciiLower(qname)
	zone := ix.zoneOf(lower)
	switch {
	case zone == "":
		return reply(resp, req, dns.RcodeRefused) // not ours, and nothing is forwarded
	case q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY:
		return reply(resp, req, dns.RcodeRefused)
	case q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR:
		return reply(resp, req, dns.RcodeRefused) // no zone transfers
	}
	resp.SetReply(req)
	resp.Authoritative = true
	resp.RecursionAvailable = false
	resp.Compress = true
	zoneAsAsked := qname[len(qname)-len(zone):] // keep the question's spelling, as CoreDNS does
	n := ix.lookup(lower)
	if n == nil {
		resp.Rcode = dns.RcodeNameError
		resp.Ns = []dns.RR{ix.owned(ix.names[zone].rrs[0], zoneAsAsked)}
		return resp
	}
	for _, rr := range n.rrs {
		t := rr.Header().Rrtype
		if t == q.Qtype || q.Qtype == dns.TypeANY || t == dns.TypeCNAME {
			resp.Answer = append(resp.Answer, ix.owned(rr, qname))
		}
	}
	if len(resp.Answer) == 0 {
		resp.Ns = []dns.RR{ix.owned(ix.names[zone].rrs[0], zoneAsAsked)} // NODATA
		return resp
	}
	resp.Extra = ix.additional(resp.Answer)
	return resp
}

// reply is a header-only answer with rcode (no question for FORMERR of a
// message whose question cannot be trusted).
func reply(resp, req *dns.Msg, rcode int) *dns.Msg {
	resp.SetRcode(req, rcode)
	if rcode == dns.RcodeFormatError {
		resp.Question = nil
	}
	resp.RecursionAvailable = false
	return resp
}

// lookup finds a lower-case name: in the index, or as a pod record.
func (ix *Index) lookup(name string) *node {
	if n, ok := ix.names[name]; ok {
		return n
	}
	return ix.podRecord(name)
}

// podRecord answers the pod records of specification 2.6 for any
// namespace and address (CoreDNS's "pods insecure"): <a>-<b>-<c>-<d>.<ns>.pod.<zone>
// has A a.b.c.d, and an IPv6 address with its colons as dashes
// (fd00-10-244-1--5.<ns>.pod.<zone>) has its AAAA record. As CoreDNS's
// findPods reads the name: three dashes and no "--" is IPv4, anything else
// is tried as IPv6; an IPv4-mapped IPv6 address answers A. A name that is
// no address does not exist; asked the other family's type, one that is
// answers NODATA.
func (ix *Index) podRecord(name string) *node {
	rest, ok := strings.CutSuffix(name, ".pod."+ix.Zone)
	if !ok {
		return nil
	}
	host, ns, ok := strings.Cut(rest, ".")
	if !ok || !isLabel(ns) || strings.Contains(ns, ".") {
		return nil
	}
	ip, ok := podAddress(host)
	if !ok {
		return nil
	}
	return &node{rrs: []dns.RR{addressRR(ip)}}
}

// podAddress is the address a pod record's first label spells.
func podAddress(label string) (netip.Addr, bool) {
	var text string
	if strings.Count(label, "-") == 3 && !strings.Contains(label, "--") {
		text = strings.ReplaceAll(label, "-", ".")
	} else {
		text = strings.ReplaceAll(label, "-", ":")
	}
	ip, err := netip.ParseAddr(text)
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// additional holds the A and AAAA records of the SRV targets and of the
// NS name server the answer names, when the zone has them.
func (ix *Index) additional(answer []dns.RR) []dns.RR {
	var extra []dns.RR
	seen := map[string]bool{}
	for _, rr := range answer {
		var target string
		switch r := rr.(type) {
		case *dns.SRV:
			target = r.Target
		case *dns.NS:
			target = r.Ns
		default:
			continue
		}
		if seen[target] {
			continue
		}
		seen[target] = true
		if n, ok := ix.names[asciiLower(target)]; ok {
			for _, a := range n.rrs {
				if t := a.Header().Rrtype; t == dns.TypeA || t == dns.TypeAAAA {
					extra = append(extra, ix.owned(a, target))
				}
			}
		}
	}
	return extra
}

// asciiLower lower-cases A-Z only: DNS compares names case-insensitively
// in ASCII (RFC 4343), and the result keeps the length of name.
func asciiLower(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// owned is a copy of rr with the owner name name.
func (ix *Index) owned(rr dns.RR, name string) dns.RR {
	c := dns.Copy(rr)
	c.Header().Name = name
	return c
}
