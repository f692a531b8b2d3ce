package clusterdns

import (
	"net/netip"
	"sort"
	"strings"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// DefaultZone is the cluster domain (the kubelet's --cluster-domain).
const DefaultZone = "cluster.local."

// SchemaVersion is the version of the DNS schema the server implements,
// answered at dns-version.<zone> (specification section 2.2).
const SchemaVersion = "1.0.1"

// TTL is the time-to-live of every record but dns-version's: CoreDNS's
// kubernetes plugin default (5 s).
const TTL = 5

// versionTTL is the TTL of the dns-version TXT record (the specification's
// example and CoreDNS's value).
const versionTTL = 28800

// reverseZones are the zones the server is authoritative for besides the
// cluster domain, as CoreDNS's default Corefile (`kubernetes cluster.local
// in-addr.arpa ip6.arpa`) without fallthrough.
var reverseZones = []string{"in-addr.arpa.", "ip6.arpa."}

// Objects are what the index is built from: the lab's Services and
// EndpointSlices, and the store's generation (the zone's SOA serial).
type Objects struct {
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	Serial         uint32
}

// Index is the lab's DNS data, ready for lookups: every name that exists in
// the zone (lower case, fully qualified) with its records. Names with no
// records of their own (svc.<zone>, <ns>.svc.<zone>, _tcp.<svc>…) exist,
// so that a query for them is NODATA, not NXDOMAIN.
type Index struct {
	Zone   string
	Serial uint32
	names  map[string]*node
}

// node is one name with its records, whose owner names are set when they
// are answered (the question's spelling is kept).
type node struct {
	rrs []dns.RR
}

// endpoint is one ready address of a Service with the name it has in DNS.
type endpoint struct {
	hostname string
	ip       netip.Addr
}

// NewIndex builds the index for zone (DefaultZone when empty) from objs.
// Objects whose names are not DNS labels are left out (the lab's apply
// refuses them anyway).
func NewIndex(zone string, objs Objects) *Index {
	if zone == "" {
		zone = DefaultZone
	}
	zone = dns.CanonicalName(zone)
	ix := &Index{Zone: zone, Serial: objs.Serial, names: map[string]*node{}}
	ix.add(zone, ix.soa(zone))
	ix.add("dns-version."+zone, &dns.TXT{Hdr: hdr(dns.TypeTXT, versionTTL), Txt: []string{SchemaVersion}})
	ix.ensure("svc." + zone)
	ix.ensure("pod." + zone)
	for _, rz := range reverseZones {
		ix.add(rz, ix.soa(rz))
	}
	slices := slicesByService(objs.EndpointSlices)
	services := append([]*corev1.Service(nil), objs.Services...)
	sort.Slice(services, func(i, j int) bool {
		return services[i].Namespace+"/"+services[i].Name < services[j].Namespace+"/"+services[j].Name
	})
	for _, svc := range services {
		if !isLabel(svc.Name) || !isLabel(svc.Namespace) {
			continue
		}
		ix.addService(svc, readyEndpoints(svc, slices[svc.Namespace+"/"+svc.Name]))
	}
	// ns.dns.<zone>: the name server the SOA and NS records name, at
	// every ClusterIP of kube-dns (CoreDNS's nsAddrs: A and AAAA).
	for _, ip := range dnsServiceIPs(services) {
		ix.add("ns.dns."+zone, addressRR(ip))
	}
	ix.add(zone, &dns.NS{Hdr: hdr(dns.TypeNS, TTL), Ns: "ns.dns." + zone})
	return ix
}

// DNSService is the Service whose ClusterIP is the cluster's name server.
const (
	DNSServiceNamespace = "kube-system"
	DNSServiceName      = "kube-dns"
)

// dnsServiceIPs are kube-system/kube-dns's ClusterIPs, primary first
// (none when the Service does not exist or is headless).
func dnsServiceIPs(services []*corev1.Service) []netip.Addr {
	for _, svc := range services {
		if svc.Namespace == DNSServiceNamespace && svc.Name == DNSServiceName {
			return clusterIPs(svc)
		}
	}
	return nil
}

func (ix *Index) soa(zone string) dns.RR {
	return &dns.SOA{
		Hdr:     hdr(dns.TypeSOA, TTL),
		Ns:      "ns.dns." + zone,
		Mbox:    "hostmaster." + zone,
		Serial:  ix.Serial,
		Refresh: 7200,
		Retry:   1800,
		Expire:  86400,
		Minttl:  TTL,
	}
}

// addService adds the records of one Service (specification 2.3 to 2.5),
// in both families: an A record for each IPv4 address, an AAAA record for
// each IPv6 one (spec.clusterIPs; a headless Service's endpoints from its
// IPv4 and IPv6 EndpointSlices).
func (ix *Index) addService(svc *corev1.Service, eps []endpoint) {
	base := svc.Name + "." + svc.Namespace + ".svc." + ix.Zone
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		target := dns.Fqdn(strings.ToLower(svc.Spec.ExternalName))
		if _, ok := dns.IsDomainName(target); !ok || svc.Spec.ExternalName == "" {
			return
		}
		ix.add(base, &dns.CNAME{Hdr: hdr(dns.TypeCNAME, TTL), Target: target})
	case svc.Spec.ClusterIP == corev1.ClusterIPNone:
		if len(eps) == 0 {
			return // no ready endpoints: the name does not exist (2.4.1)
		}
		targets := make([]string, 0, len(eps))
		for _, ep := range eps {
			ix.add(base, addressRR(ep.ip))
			targets = append(targets, ep.hostname+"."+base)
		}
		ix.addEndpoints(base, eps)
		ix.addSRV(svc, base, targets)
	default:
		ips := clusterIPs(svc)
		if len(ips) == 0 {
			return
		}
		targets := make([]string, 0, len(ips))
		for _, ip := range ips {
			ix.add(base, addressRR(ip))
			ix.add(reverseName(ip), &dns.PTR{Hdr: hdr(dns.TypePTR, TTL), Ptr: base})
			targets = append(targets, base)
		}
		ix.addEndpoints(base, eps)
		ix.addSRV(svc, base, targets)
	}
}

// clusterIPs are a Service's ClusterIPs, primary first: spec.clusterIPs,
// or spec.clusterIP when the list is empty (CoreDNS's object.Service does
// the same). Addresses that do not parse are left out; none for a
// headless Service.
func clusterIPs(svc *corev1.Service) []netip.Addr {
	list := svc.Spec.ClusterIPs
	if len(list) == 0 {
		list = []string{svc.Spec.ClusterIP}
	}
	var ips []netip.Addr
	for _, s := range list {
		if ip, err := netip.ParseAddr(s); err == nil && ip.Zone() == "" {
			ips = append(ips, ip.Unmap())
		}
	}
	return ips
}

// addressRR is the A record of an IPv4 address, the AAAA record of an
// IPv6 one.
func addressRR(ip netip.Addr) dns.RR {
	if ip.Is4() {
		return &dns.A{Hdr: hdr(dns.TypeA, TTL), A: ip.AsSlice()}
	}
	return &dns.AAAA{Hdr: hdr(dns.TypeAAAA, TTL), AAAA: ip.AsSlice()}
}

// addEndpoints adds <hostname>.<svc>… A and AAAA records and the
// endpoints' PTR records, in in-addr.arpa and ip6.arpa (CoreDNS answers
// both for the endpoints of any Service).
func (ix *Index) addEndpoints(base string, eps []endpoint) {
	for _, ep := range eps {
		name := ep.hostname + "." + base
		ix.add(name, addressRR(ep.ip))
		ix.add(reverseName(ep.ip), &dns.PTR{Hdr: hdr(dns.TypePTR, TTL), Ptr: name})
	}
}

// addSRV adds _<port>._<proto>.<svc>… for every named port, one record
// per distinct target: targets holds one entry per address the name has
// (the Service's name once per ClusterIP; a headless Service's endpoint
// names, one per endpoint address). As CoreDNS's plugin.SRV, every
// address counts in the weight (100 split over them) and a target named
// twice (a dual-stack ClusterIP, an endpoint hostname with an address in
// each family) gets one record.
func (ix *Index) addSRV(svc *corev1.Service, base string, targets []string) {
	weight := uint16(100 / len(targets))
	if weight == 0 {
		weight = 1
	}
	for _, p := range svc.Spec.Ports {
		if p.Name == "" || !isLabel(p.Name) {
			continue // unnamed ports have no SRV record
		}
		proto := strings.ToLower(string(p.Protocol))
		if proto == "" {
			proto = "tcp"
		}
		name := "_" + p.Name + "._" + proto + "." + base
		seen := map[string]bool{}
		for _, target := range targets {
			if !seen[target] {
				seen[target] = true
				ix.add(name, srv(target, uint16(p.Port), weight))
			}
		}
	}
}

func srv(target string, port, weight uint16) dns.RR {
	return &dns.SRV{Hdr: hdr(dns.TypeSRV, TTL), Priority: 0, Weight: weight, Port: port, Target: target}
}

// add appends rr to name, creating it and its ancestors in the zone.
func (ix *Index) add(name string, rr dns.RR) {
	n := ix.ensure(name)
	n.rrs = append(n.rrs, rr)
}

// ensure makes name and every ancestor below its zone exist.
func (ix *Index) ensure(name string) *node {
	name = asciiLower(name)
	n, ok := ix.names[name]
	if !ok {
		n = &node{}
		ix.names[name] = n
	}
	zone := ix.zoneOf(name)
	for parent := name; parent != zone && parent != "." && zone != ""; {
		_, rest, _ := strings.Cut(parent, ".")
		parent = rest
		if parent == "" {
			break
		}
		if _, ok := ix.names[parent]; !ok {
			ix.names[parent] = &node{}
		}
	}
	return n
}

// zoneOf is the zone a lower-case name belongs to, "" for none.
func (ix *Index) zoneOf(name string) string {
	if inZone(name, ix.Zone) {
		return ix.Zone
	}
	for _, z := range reverseZones {
		if inZone(name, z) {
			return z
		}
	}
	return ""
}

// inZone reports whether the lower-case, fully qualified name is zone or
// below it.
func inZone(name, zone string) bool {
	return name == zone || strings.HasSuffix(name, "."+zone) && !strings.HasSuffix(name, `\.`+zone)
}

// readyEndpoints are the addresses DNS publishes for svc, from its IPv4
// and IPv6 EndpointSlices: the ready ones (Conditions.Ready unset counts
// as ready, as the EndpointSlice API says), or all of them with
// spec.publishNotReadyAddresses. Sorted by hostname, then IP (IPv4
// first); one per address.
func readyEndpoints(svc *corev1.Service, slices []*discoveryv1.EndpointSlice) []endpoint {
	seen := map[netip.Addr]bool{}
	var out []endpoint
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue // FQDN slices publish no address
		}
		for _, e := range s.Endpoints {
			ready := e.Conditions.Ready == nil || *e.Conditions.Ready
			if !ready && !svc.Spec.PublishNotReadyAddresses {
				continue
			}
			for _, a := range e.Addresses {
				ip, ok := sliceAddress(s.AddressType, a)
				if !ok || seen[ip] {
					continue
				}
				seen[ip] = true
				host := dashed(ip)
				if e.Hostname != nil && isLabel(*e.Hostname) {
					host = strings.ToLower(*e.Hostname)
				}
				out = append(out, endpoint{hostname: host, ip: ip})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].hostname != out[j].hostname {
			return out[i].hostname < out[j].hostname
		}
		return out[i].ip.Less(out[j].ip)
	})
	return out
}

// sliceAddress parses an endpoint address of a slice of addressType: an
// address of the slice's family, else not ok.
func sliceAddress(addressType discoveryv1.AddressType, s string) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(s)
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, false
	}
	if addressType == discoveryv1.AddressTypeIPv4 {
		return ip, ip.Is4()
	}
	return ip, ip.Is6() && !ip.Is4In6()
}

// dashed is the name an endpoint without a hostname has in DNS, as
// CoreDNS's endpointHostname spells it: an IPv4 address with its dots as
// dashes (10-244-1-3), an IPv6 address with its colons as dashes and a 0
// after a trailing one (fd00-10-244-1--3, fd00---0 for fd00::).
func dashed(ip netip.Addr) string {
	if ip.Is4() {
		return strings.ReplaceAll(ip.String(), ".", "-")
	}
	host := strings.ReplaceAll(ip.String(), ":", "-")
	if strings.HasSuffix(host, "-") {
		host += "0"
	}
	return host
}

func slicesByService(all []*discoveryv1.EndpointSlice) map[string][]*discoveryv1.EndpointSlice {
	out := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range all {
		svc := s.Labels[discoveryv1.LabelServiceName]
		if svc == "" {
			continue
		}
		out[s.Namespace+"/"+svc] = append(out[s.Namespace+"/"+svc], s)
	}
	for _, list := range out {
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	}
	return out
}

// reverseName is the in-addr.arpa name of an IPv4 address, the ip6.arpa
// name of an IPv6 one.
func reverseName(ip netip.Addr) string {
	name, _ := dns.ReverseAddr(ip.String())
	return name
}

func hdr(rrtype uint16, ttl uint32) dns.RR_Header {
	return dns.RR_Header{Rrtype: rrtype, Class: dns.ClassINET, Ttl: ttl}
}

// isLabel reports whether s is a lower-case DNS-1123 label (what the API
// server allows for Service, namespace and port names).
func isLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}
