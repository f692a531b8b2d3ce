package clusterdns

import (
	"fmt"
	"net/http"
	"sort"
	"sync"

	"github.com/miekg/dns"
)

// counters are the server's request counts, by transport and rcode, served
// at /metrics under CoreDNS's metric names (coredns_dns_requests_total,
// coredns_dns_responses_total), so the kube-dns Service's metrics port
// answers as the coredns pod's does.
type counters struct {
	mu        sync.Mutex
	requests  map[string]int64 // by proto
	responses map[string]int64 // by rcode
}

func (c *counters) count(udp bool, rcode int) {
	proto := "tcp"
	if udp {
		proto = "udp"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.requests == nil {
		c.requests, c.responses = map[string]int64{}, map[string]int64{}
	}
	c.requests[proto]++
	c.responses[dns.RcodeToString[rcode]]++
}

func (s *Server) metricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		s.counts.mu.Lock()
		defer s.counts.mu.Unlock()
		fmt.Fprintln(w, "# TYPE coredns_dns_requests_total counter")
		for _, k := range sortedKeys(s.counts.requests) {
			fmt.Fprintf(w, "coredns_dns_requests_total{proto=%q,server=\"dns://%s\",zone=%q} %d\n", k, s.opts.Listen, s.index.Load().Zone, s.counts.requests[k])
		}
		fmt.Fprintln(w, "# TYPE coredns_dns_responses_total counter")
		for _, k := range sortedKeys(s.counts.responses) {
			fmt.Fprintf(w, "coredns_dns_responses_total{rcode=%q,server=\"dns://%s\",zone=%q} %d\n", k, s.opts.Listen, s.index.Load().Zone, s.counts.responses[k])
		}
	})
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "OK") })
	return mux
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
