package upstream

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	coredefaults "k8s.io/kubernetes/pkg/apis/core/v1"
	discoverydefaults "k8s.io/kubernetes/pkg/apis/discovery/v1"
)

// maxCaseBytes bounds a corpus file.
const maxCaseBytes = 1 << 20

// Case is one corpus configuration: the objects a node's proxy sees and the
// proxy's options. It is kept as a YAML file, testdata/iptables/NAME.yaml.
type Case struct {
	// Name is the file name without .yaml.
	Name string `json:"-"`
	// Description says what the case covers.
	Description string `json:"description"`
	// Node is this node: its name and labels (the zone label is what
	// upstream's topology code looks at).
	Node NodeSpec `json:"node"`
	// Options are the proxy's settings.
	Options Options `json:"options"`
	// ExpectedDifference, when set, documents a deliberate difference: the
	// case passes only while the tables differ, and the text says why.
	ExpectedDifference string `json:"expectedDifference,omitempty"`
	// ExpectedNFTablesDifference is ExpectedDifference for the nftables
	// comparison (TestNFTablesMatchesUpstream).
	ExpectedNFTablesDifference string `json:"expectedNFTablesDifference,omitempty"`
	// Objects are Services and EndpointSlices, as kubectl would apply them.
	Objects []json.RawMessage `json:"objects"`
	// BulkEndpoints generate large EndpointSlices (large-cluster mode)
	// rather than listing thousands of endpoints.
	BulkEndpoints []BulkEndpoints `json:"bulkEndpoints,omitempty"`

	Services       []*corev1.Service            `json:"-"`
	EndpointSlices []*discoveryv1.EndpointSlice `json:"-"`
}

// NodeSpec is this node.
type NodeSpec struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Options are the kube-proxy settings a case may change. The zero value is
// upstream's default apart from LocalhostNodePorts (see there).
type Options struct {
	// IPFamily is the family whose proxier the case runs: IPv4 (also when
	// empty), IPv6, or DualStack for both, as upstream's metaproxier, each
	// compared with svclab's render of the same family.
	IPFamily string `json:"ipFamily,omitempty"`
	// Family is the family of a one-family view of the options
	// (ForFamily); empty is IPv4.
	Family corev1.IPFamily `json:"-"`
	// ClusterCIDR selects the ClusterCIDR local-traffic detector; empty
	// means no detector (upstream's no-op detector). As --cluster-cidr, it
	// may list one CIDR per family, comma separated ("10.244.0.0/16,
	// fd00:10:244::/56" without the space); each family's proxier takes its
	// own, none means no detector.
	ClusterCIDR string `json:"clusterCIDR,omitempty"`
	// BridgeInterface selects the BridgeInterface detector (pod traffic
	// arrives on this bridge); it wins over ClusterCIDR.
	BridgeInterface string `json:"bridgeInterface,omitempty"`
	// InterfaceNamePrefix selects the InterfaceNamePrefix detector (pod
	// traffic arrives on interfaces named so); it wins over the others.
	InterfaceNamePrefix string `json:"interfaceNamePrefix,omitempty"`
	// MasqueradeAll is --masquerade-all.
	MasqueradeAll bool `json:"masqueradeAll,omitempty"`
	// MasqueradeBit is --iptables-masquerade-bit (default 14).
	MasqueradeBit *int `json:"masqueradeBit,omitempty"`
	// LocalhostNodePorts is --iptables-localhost-nodeports; absent means
	// upstream's default, true.
	LocalhostNodePorts *bool `json:"localhostNodePorts,omitempty"`
	// NodePortAddresses is --nodeport-addresses: CIDRs, or ["primary"].
	NodePortAddresses []string `json:"nodePortAddresses,omitempty"`
	// NodeIP is this node's primary address; default DefaultNodeIP (in an
	// IPv6 case, the IPv6 node address, default DefaultNodeIPv6).
	NodeIP string `json:"nodeIP,omitempty"`
	// NodeIPv6 is this node's IPv6 address, the IPv6 proxier's node IP;
	// default DefaultNodeIPv6.
	NodeIPv6 string `json:"nodeIPv6,omitempty"`
	// NoRandomFully makes the fake iptables lack --random-fully.
	NoRandomFully bool `json:"noRandomFully,omitempty"`
	// ConntrackTCPBeLiberal sets net.netfilter.nf_conntrack_tcp_be_liberal.
	ConntrackTCPBeLiberal bool `json:"conntrackTCPBeLiberal,omitempty"`
	// ServiceCIDRs are the cluster's ServiceCIDRs (upstream's nftables
	// proxier drops traffic to unallocated cluster IPs in them; the
	// iptables comparison ignores them, as upstream's iptables proxier).
	ServiceCIDRs []string `json:"serviceCIDRs,omitempty"`
}

// BulkEndpoints is a generated service backend: Count endpoints from
// FirstIP upwards, in slices of at most 100 (as the EndpointSlice
// controller cuts them), all on NodeName.
type BulkEndpoints struct {
	Namespace string                     `json:"namespace"`
	Service   string                     `json:"service"`
	Count     int                        `json:"count"`
	FirstIP   string                     `json:"firstIP"`
	NodeName  string                     `json:"nodeName,omitempty"`
	Ports     []discoveryv1.EndpointPort `json:"ports"`
}

// DefaultNodeIP is the node address of every case unless it sets nodeIP;
// the test's network namespace has it on lo.
const DefaultNodeIP = "192.168.0.10"

// LoadCorpus reads every dir/*.yaml, sorted by name.
func LoadCorpus(dir string) ([]*Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var cases []*Case
	for _, p := range paths {
		c, err := LoadCase(p)
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// LoadCase reads one case file.
func LoadCase(path string) (*Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) > maxCaseBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", path, len(data), maxCaseBytes)
	}
	c, err := ParseCase(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Name = strings.TrimSuffix(filepath.Base(path), ".yaml")
	return c, nil
}

// ParseCase decodes a case and its objects, and fills in the objects'
// defaults as the API server does (upstream's proxier relies on them, e.g.
// sessionAffinityConfig for ClientIP affinity).
func ParseCase(data []byte) (*Case, error) {
	c := &Case{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, err
	}
	if c.Node.Name == "" {
		return nil, fmt.Errorf("node.name: required")
	}
	if err := c.Options.settleFamilies(); err != nil {
		return nil, err
	}
	for i, raw := range c.Objects {
		if err := c.addObject(raw); err != nil {
			return nil, fmt.Errorf("objects[%d]: %w", i, err)
		}
	}
	for i, b := range c.BulkEndpoints {
		slices, err := b.slices()
		if err != nil {
			return nil, fmt.Errorf("bulkEndpoints[%d]: %w", i, err)
		}
		c.EndpointSlices = append(c.EndpointSlices, slices...)
	}
	return c, nil
}

func (c *Case) addObject(raw json.RawMessage) error {
	var meta metav1.TypeMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return err
	}
	switch meta.Kind {
	case "Service":
		s := &corev1.Service{}
		if err := strictJSON(raw, s); err != nil {
			return fmt.Errorf("kind Service: %w", err)
		}
		coredefaults.SetObjectDefaults_Service(s)
		c.Services = append(c.Services, s)
	case "EndpointSlice":
		s := &discoveryv1.EndpointSlice{}
		if err := strictJSON(raw, s); err != nil {
			return fmt.Errorf("kind EndpointSlice: %w", err)
		}
		discoverydefaults.SetObjectDefaults_EndpointSlice(s)
		c.EndpointSlices = append(c.EndpointSlices, s)
	default:
		return fmt.Errorf("kind %q: only Service and EndpointSlice", meta.Kind)
	}
	return nil
}

func strictJSON(raw json.RawMessage, into any) error {
	return yaml.UnmarshalStrict(raw, into)
}

func (b BulkEndpoints) slices() ([]*discoveryv1.EndpointSlice, error) {
	ip, err := netip.ParseAddr(b.FirstIP)
	if err != nil {
		return nil, fmt.Errorf("firstIP: %w", err)
	}
	if b.Count <= 0 || b.Count > 20000 {
		return nil, fmt.Errorf("count %d: must be within 1..20000", b.Count)
	}
	var out []*discoveryv1.EndpointSlice
	for i := 0; i < b.Count; i += 100 {
		s := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: b.Namespace,
				Name:      fmt.Sprintf("%s-%s%03d", b.Service, familyInfix(ip), i/100),
				Labels:    map[string]string{discoveryv1.LabelServiceName: b.Service},
			},
			AddressType: addressTypeOf(ip),
			Ports:       b.Ports,
		}
		for j := i; j < b.Count && j < i+100; j++ {
			e := discoveryv1.Endpoint{Addresses: []string{ip.String()}}
			if b.NodeName != "" {
				e.NodeName = &b.NodeName
			}
			s.Endpoints = append(s.Endpoints, e)
			ip = ip.Next()
		}
		out = append(out, s)
	}
	return out, nil
}

// familyInfix keeps the generated slices of the two families of one
// service apart: "" for IPv4 (big-000), "v6-" for IPv6 (big-v6-000).
func familyInfix(ip netip.Addr) string {
	if ip.Is6() {
		return "v6-"
	}
	return ""
}

// addressTypeOf is the EndpointSlice address type of ip's family.
func addressTypeOf(ip netip.Addr) discoveryv1.AddressType {
	if ip.Is6() {
		return discoveryv1.AddressTypeIPv6
	}
	return discoveryv1.AddressTypeIPv4
}

// localhostNodePorts is the option with upstream's default.
func (o Options) localhostNodePorts() bool {
	return o.LocalhostNodePorts == nil || *o.LocalhostNodePorts
}

func (o Options) masqueradeBit() int {
	if o.MasqueradeBit == nil {
		return 14
	}
	return *o.MasqueradeBit
}
