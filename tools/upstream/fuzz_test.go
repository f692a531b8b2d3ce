package upstream

import (
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	coredefaults "k8s.io/kubernetes/pkg/apis/core/v1"
	discoverydefaults "k8s.io/kubernetes/pkg/apis/discovery/v1"

	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// fuzzClusterCIDRv6 is the IPv6 cluster CIDR of the fuzz cases: it holds
// modeltest.Generate's IPv6 pod address.
const fuzzClusterCIDRv6 = "fd00:244::/64"

// fuzzOptions picks a dual-stack case's proxy options from one byte: the
// local detector, masquerade-all, the masquerade bit, --random-fully,
// localhost node ports, --nodeport-addresses and the conntrack sysctl.
func fuzzOptions(b byte) Options {
	o := Options{IPFamily: DualStack, NodeIP: modeltest.NodeIP, NodeIPv6: DefaultNodeIPv6}
	switch b % 4 {
	case 0:
		o.ClusterCIDR = modeltest.ClusterCIDR + "," + fuzzClusterCIDRv6
	case 1:
		o.BridgeInterface = "cni0"
	case 2:
		o.InterfaceNamePrefix = "veth"
	}
	o.MasqueradeAll = b&4 != 0
	if b&8 != 0 {
		bit := 31
		o.MasqueradeBit = &bit
	}
	o.NoRandomFully = b&16 != 0
	localhost := b&32 != 0
	o.LocalhostNodePorts = &localhost
	if b&64 != 0 {
		o.NodePortAddresses = []string{"primary"}
	}
	o.ConntrackTCPBeLiberal = b&128 != 0
	return o
}

// fuzzCase is the case of a fuzz input: modeltest.Generate's objects with
// the API server's defaults, on modeltest's node. svclab's endpoint-weight
// annotation is removed: it is svclab's own extension, which upstream
// ignores (and the iptables renderer does not use either). EndpointSlices
// the API server would reject for an address of the other family are left
// out (apiAcceptsAddresses).
func fuzzCase(o byte, data []byte) *Case {
	services, generated := modeltest.Generate(data)
	for _, s := range services {
		coredefaults.SetObjectDefaults_Service(s)
	}
	var slices []*discoveryv1.EndpointSlice
	for _, s := range generated {
		if !apiAcceptsAddresses(s) {
			continue
		}
		delete(s.Annotations, model.WeightsAnnotation)
		discoverydefaults.SetObjectDefaults_EndpointSlice(s)
		slices = append(slices, s)
	}
	return &Case{
		Name:           "fuzz",
		Node:           NodeSpec{Name: modeltest.NodeName},
		Options:        fuzzOptions(o),
		Services:       services,
		EndpointSlices: slices,
	}
}

// apiAcceptsAddresses reports whether every address of an IPv4 or IPv6
// EndpointSlice is of its addressType, as the API server's validation
// demands. Upstream's proxiers trust it and take a slice's addresses as
// they are (an IPv6 proxier would DNAT to an IPv4 address of an IPv6
// slice); svclab's model drops such an address itself. An address
// with a colon is IPv6's, any other IPv4's (padded forms included).
func apiAcceptsAddresses(s *discoveryv1.EndpointSlice) bool {
	if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
		return true
	}
	for _, e := range s.Endpoints {
		for _, a := range e.Addresses {
			if strings.Contains(a, ":") != (s.AddressType == discoveryv1.AddressTypeIPv6) {
				return false
			}
		}
	}
	return true
}

// FuzzIPTablesMatchesUpstream generates Services and EndpointSlices
// (modeltest.Generate, the generator of svclab's renderer fuzz targets and
// their shared seed corpus; they hold IPv4, IPv6 and dual-stack objects)
// and options, and requires svclab's first sync to leave the same nat and
// filter tables as upstream kube-proxy's, in each family's proxier.
// The seed form (options byte, first, second) is modeltest's; the second
// state is not used here.
func FuzzIPTablesMatchesUpstream(f *testing.F) {
	modeltest.AddSeeds(f)
	f.Fuzz(func(t *testing.T, o byte, first, _ []byte) {
		requireNetns(t)
		c := fuzzCase(o, first)
		for _, family := range c.Families() {
			want, got, log := compareCase(t, c.ForFamily(family))
			if want != got {
				t.Errorf("%s: svclab's tables differ from upstream kube-proxy's (-upstream +svclab):\n%s\nupstream log:\n%s", family, UnifiedDiff(want, got), log)
			}
		}
	})
}

// FuzzNFTablesMatchesUpstream is FuzzIPTablesMatchesUpstream for nftables
// mode: svclab's first sync and upstream's nftables proxier's, each into
// its own knftables.Fake, must dump the same table (NormalizeNFTDump).
func FuzzNFTablesMatchesUpstream(f *testing.F) {
	modeltest.AddSeeds(f)
	f.Fuzz(func(t *testing.T, o byte, first, _ []byte) {
		requireNetns(t)
		c := fuzzCase(o, first)
		for _, family := range c.Families() {
			want, got, log := compareNFTCase(t, c.ForFamily(family))
			if want != got {
				t.Errorf("%s: svclab's nftables table differs from upstream kube-proxy's (-upstream +svclab):\n%s\nupstream log:\n%s", family, UnifiedDiff(want, got), log)
			}
		}
	})
}
