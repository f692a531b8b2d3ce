// Package dnslookup asks a pod's resolver for one name, as `dig +search`
// does: the name is expanded with resolv.conf's search list and ndots, each
// candidate is asked of the name servers in order, and the first answer
// that is not NXDOMAIN is the result, with every record of its answer
// section. The conformance suite runs it in a pod (`svclab lookup`) to see
// what cluster DNS answers for a Service's name: the ClusterIP, a headless
// Service's endpoints, an ExternalName Service's CNAME.
//
// It asks exactly the type it is given (A, AAAA for a Service's or pod's
// IPv6 addresses, or CNAME, as `dig CNAME` does) and chases nothing, so
// what it returns is what the server said: a name without records of the
// asked family (AAAA of an IPv4-only Service) is an answer with none.
package dnslookup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// ResolvConf is the resolver configuration a pod's processes use.
const ResolvConf = "/etc/resolv.conf"

// Types are the query types Lookup asks.
var Types = map[string]uint16{"A": dns.TypeA, "AAAA": dns.TypeAAAA, "CNAME": dns.TypeCNAME}

// Answer is what a resolver said about one name.
type Answer struct {
	// Name is the fully qualified name that answered (a candidate of the
	// search list).
	Name string `json:"name"`
	// Records are the answer section's records of the asked type.
	Records []Record `json:"records"`
}

// Record is one resource record of an answer.
type Record struct {
	// Type is A, AAAA or CNAME.
	Type string `json:"type"`
	// Value is the address (A, AAAA) or the target name, fully qualified
	// with its trailing dot (CNAME).
	Value string `json:"value"`
}

// Values are the records' values, in the order the server gave them.
func (a Answer) Values() []string {
	out := make([]string, 0, len(a.Records))
	for _, r := range a.Records {
		out = append(out, r.Value)
	}
	return out
}

// timeout bounds one query to one server, as resolv.conf's default
// `options timeout:5` does.
const timeout = 5 * time.Second

// Lookup asks the resolver of ResolvConf for name's records of qtype (A,
// AAAA or CNAME).
func Lookup(ctx context.Context, name, qtype string) (Answer, error) {
	conf, err := dns.ClientConfigFromFile(ResolvConf)
	if err != nil {
		return Answer{}, fmt.Errorf("lookup %s: %w", name, err)
	}
	return LookupWith(ctx, conf, name, qtype)
}

// LookupWith is Lookup with a resolver configuration of its own.
func LookupWith(ctx context.Context, conf *dns.ClientConfig, name, qtype string) (Answer, error) {
	t, ok := Types[strings.ToUpper(qtype)]
	if !ok {
		return Answer{}, fmt.Errorf("lookup %s: query type %q: want A, AAAA or CNAME", name, qtype)
	}
	if len(conf.Servers) == 0 {
		return Answer{}, fmt.Errorf("lookup %s: the resolver configuration names no server", name)
	}
	var errs []error
	for _, candidate := range conf.NameList(name) {
		a, found, err := ask(ctx, conf, candidate, t)
		if err != nil {
			return Answer{}, fmt.Errorf("lookup %s: %w", name, err)
		}
		if found {
			return a, nil
		}
		errs = append(errs, fmt.Errorf("%s: NXDOMAIN", candidate))
	}
	return Answer{}, fmt.Errorf("lookup %s %s: no such name: %w", qtype, name, errors.Join(errs...))
}

// ask asks one candidate name of the servers in order, over UDP and, when
// the answer is truncated, again over TCP; found is false on NXDOMAIN.
func ask(ctx context.Context, conf *dns.ClientConfig, name string, t uint16) (Answer, bool, error) {
	q := new(dns.Msg).SetQuestion(name, t)
	var last error
	for _, server := range conf.Servers {
		addr := net.JoinHostPort(server, conf.Port)
		r, _, err := (&dns.Client{Net: "udp", Timeout: timeout}).ExchangeContext(ctx, q, addr)
		if err == nil && r.Truncated {
			r, _, err = (&dns.Client{Net: "tcp", Timeout: timeout}).ExchangeContext(ctx, q, addr)
		}
		if err != nil {
			last = fmt.Errorf("%s %s to %s: %w", dns.TypeToString[t], name, addr, err)
			continue
		}
		switch r.Rcode {
		case dns.RcodeNameError:
			return Answer{}, false, nil
		case dns.RcodeSuccess:
			return answerOf(name, t, r), true, nil
		}
		last = fmt.Errorf("%s %s to %s: %s", dns.TypeToString[t], name, addr, dns.RcodeToString[r.Rcode])
	}
	return Answer{}, false, last
}

// answerOf keeps the records of the asked type in a response's answer
// section.
func answerOf(name string, t uint16, r *dns.Msg) Answer {
	a := Answer{Name: name, Records: []Record{}}
	for _, rr := range r.Answer {
		switch v := rr.(type) {
		case *dns.A:
			if t == dns.TypeA {
				a.Records = append(a.Records, Record{Type: "A", Value: v.A.String()})
			}
		case *dns.AAAA:
			if t == dns.TypeAAAA {
				a.Records = append(a.Records, Record{Type: "AAAA", Value: v.AAAA.String()})
			}
		case *dns.CNAME:
			if t == dns.TypeCNAME {
				a.Records = append(a.Records, Record{Type: "CNAME", Value: v.Target})
			}
		}
	}
	return a
}
