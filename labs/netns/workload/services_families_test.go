package workload

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/podnet"
)

// Labs of each shape the API server may be configured with: its Service
// ranges (primary first) and the nodes' pod CIDRs.
var (
	v4Lab = Cluster{
		Nodes:         []Node{{Name: "hosta", PodCIDR: netip.MustParsePrefix("10.244.1.0/24")}},
		ServiceSubnet: netip.MustParsePrefix("10.96.0.0/16"),
	}
	dualLab = Cluster{
		Nodes: []Node{{Name: "hosta", PodCIDR: netip.MustParsePrefix("10.244.1.0/24"),
			PodCIDRs: []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24"), netip.MustParsePrefix("fd00:10:244:1::/64")}}},
		ServiceSubnet:  netip.MustParsePrefix("10.96.0.0/16"),
		ServiceSubnets: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("fd00:10:96::/112")},
	}
	dual6Lab = Cluster{
		Nodes: []Node{{Name: "hosta", PodCIDR: netip.MustParsePrefix("fd00:10:244:1::/64"),
			PodCIDRs: []netip.Prefix{netip.MustParsePrefix("fd00:10:244:1::/64"), netip.MustParsePrefix("10.244.1.0/24")}}},
		ServiceSubnet:  netip.MustParsePrefix("fd00:10:96::/112"),
		ServiceSubnets: []netip.Prefix{netip.MustParsePrefix("fd00:10:96::/112"), netip.MustParsePrefix("10.96.0.0/16")},
	}
	v6Lab = Cluster{
		Nodes:         []Node{{Name: "hosta", PodCIDR: netip.MustParsePrefix("fd00:10:244:1::/64")}},
		ServiceSubnet: netip.MustParsePrefix("fd00:10:96::/112"),
	}
)

// familyService is a Service named s with the spec lines given (indented
// two spaces), port 80 and, unless the lines name one, selector app=s.
func familyService(lines string) string {
	if !strings.Contains(lines, "selector") {
		lines += "  selector: {app: s}\n"
	}
	return "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n" + lines + "  ports: [{port: 80}]\n"
}

// serviceFamilies is what a stored Service shows of its families.
type serviceFamilies struct {
	policy     corev1.IPFamilyPolicy
	families   string // comma-separated
	clusterIPs string // comma-separated
}

func familiesOf(svc *corev1.Service) serviceFamilies {
	var got serviceFamilies
	if svc.Spec.IPFamilyPolicy != nil {
		got.policy = *svc.Spec.IPFamilyPolicy
	}
	var fams []string
	for _, f := range svc.Spec.IPFamilies {
		fams = append(fams, string(f))
	}
	got.families = strings.Join(fams, ",")
	got.clusterIPs = strings.Join(svc.Spec.ClusterIPs, ",")
	return got
}

// TestServiceIPFamilyDefaults: ipFamilyPolicy, ipFamilies and clusterIPs
// as the API server defaults and allocates them on create, on every
// shape of lab; spec.clusterIP is clusterIPs[0].
func TestServiceIPFamilyDefaults(t *testing.T) {
	const (
		single  = corev1.IPFamilyPolicySingleStack
		prefer  = corev1.IPFamilyPolicyPreferDualStack
		require = corev1.IPFamilyPolicyRequireDualStack
	)
	for _, tc := range []struct {
		name  string
		lab   Cluster
		lines string
		want  serviceFamilies
	}{
		{"ipv4 lab, nothing asked", v4Lab, "", serviceFamilies{single, "IPv4", "10.96.0.11"}},
		{"ipv4 lab, PreferDualStack", v4Lab, "  ipFamilyPolicy: PreferDualStack\n", serviceFamilies{prefer, "IPv4", "10.96.0.11"}},
		{"ipv4 lab, clusterIP given", v4Lab, "  clusterIP: 10.96.0.50\n", serviceFamilies{single, "IPv4", "10.96.0.50"}},
		{"ipv4 lab, headless", v4Lab, "  clusterIP: None\n", serviceFamilies{single, "IPv4", "None"}},
		{"ipv4 lab, headless without selector", v4Lab, "  clusterIP: None\n  selector: null\n", serviceFamilies{require, "IPv4,IPv6", "None"}},
		{"ipv4 lab, headless without selector, SingleStack", v4Lab, "  clusterIP: None\n  selector: null\n  ipFamilyPolicy: SingleStack\n", serviceFamilies{single, "IPv4", "None"}},
		{"ipv4 lab, headless without selector, IPv6 asked", v4Lab, "  clusterIP: None\n  selector: null\n  ipFamilies: [IPv6]\n", serviceFamilies{require, "IPv6,IPv4", "None"}},
		{"dual lab, nothing asked", dualLab, "", serviceFamilies{single, "IPv4", "10.96.0.11"}},
		{"dual lab, PreferDualStack", dualLab, "  ipFamilyPolicy: PreferDualStack\n", serviceFamilies{prefer, "IPv4,IPv6", "10.96.0.11,fd00:10:96::b"}},
		{"dual lab, RequireDualStack", dualLab, "  ipFamilyPolicy: RequireDualStack\n", serviceFamilies{require, "IPv4,IPv6", "10.96.0.11,fd00:10:96::b"}},
		{"dual lab, RequireDualStack IPv6 first", dualLab, "  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv6]\n", serviceFamilies{require, "IPv6,IPv4", "fd00:10:96::b,10.96.0.11"}},
		{"dual lab, SingleStack IPv6", dualLab, "  ipFamilies: [IPv6]\n", serviceFamilies{single, "IPv6", "fd00:10:96::b"}},
		{"dual lab, IPv6 clusterIP infers the family", dualLab, "  clusterIP: fd00:10:96::50\n", serviceFamilies{single, "IPv6", "fd00:10:96::50"}},
		{"dual lab, both clusterIPs given", dualLab, "  ipFamilyPolicy: PreferDualStack\n  clusterIP: fd00:10:96::50\n  clusterIPs: [fd00:10:96::50, 10.96.0.50]\n", serviceFamilies{prefer, "IPv6,IPv4", "fd00:10:96::50,10.96.0.50"}},
		{"dual lab, primary clusterIP given, secondary allocated", dualLab, "  ipFamilyPolicy: RequireDualStack\n  clusterIP: 10.96.0.50\n", serviceFamilies{require, "IPv4,IPv6", "10.96.0.50,fd00:10:96::b"}},
		{"dual lab, headless PreferDualStack", dualLab, "  clusterIP: None\n  ipFamilyPolicy: PreferDualStack\n", serviceFamilies{prefer, "IPv4,IPv6", "None"}},
		{"IPv6-primary dual lab, nothing asked", dual6Lab, "", serviceFamilies{single, "IPv6", "fd00:10:96::b"}},
		{"IPv6-primary dual lab, PreferDualStack", dual6Lab, "  ipFamilyPolicy: PreferDualStack\n", serviceFamilies{prefer, "IPv6,IPv4", "fd00:10:96::b,10.96.0.11"}},
		{"ipv6 lab, nothing asked", v6Lab, "", serviceFamilies{single, "IPv6", "fd00:10:96::b"}},
		{"ipv6 lab, PreferDualStack", v6Lab, "  ipFamilyPolicy: PreferDualStack\n", serviceFamilies{prefer, "IPv6", "fd00:10:96::b"}},
		{"ipv6 lab, headless without selector", v6Lab, "  clusterIP: None\n  selector: null\n", serviceFamilies{require, "IPv6,IPv4", "None"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := tryApply(tc.lab, &labstore.State{}, familyService(tc.lines))
			if err != nil {
				t.Fatal(err)
			}
			svc := st.Service("default", "s")
			if got := familiesOf(svc); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if svc.Spec.ClusterIP != svc.Spec.ClusterIPs[0] {
				t.Errorf("clusterIP %s, clusterIPs %v: want clusterIP == clusterIPs[0]", svc.Spec.ClusterIP, svc.Spec.ClusterIPs)
			}
		})
	}
}

// TestServiceIPFamilyErrors: every refusal of the dual-stack rules, with
// the API server's messages (svclab's own for a cluster IP outside the
// lab's range or taken).
func TestServiceIPFamilyErrors(t *testing.T) {
	const where = "manifest t.yaml: document 1: Service default/s: "
	for _, tc := range []struct {
		name  string
		lab   Cluster
		lines string
		want  string
	}{
		{"RequireDualStack on a single-stack lab", v4Lab, "  ipFamilyPolicy: RequireDualStack\n",
			`spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
		{"RequireDualStack on an ipv6 lab", v6Lab, "  ipFamilyPolicy: RequireDualStack\n",
			`spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
		{"a family the lab lacks", v4Lab, "  ipFamilies: [IPv6]\n",
			`spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`},
		{"IPv4 on an ipv6 lab", v6Lab, "  ipFamilyPolicy: PreferDualStack\n  ipFamilies: [IPv4]\n",
			`spec.ipFamilies[0]: Invalid value: "IPv4": not configured on this cluster`},
		{"a cluster IP of a family the lab lacks", v4Lab, "  clusterIP: fd00:10:96::20\n",
			`spec.clusterIPs[0]: Invalid value: ["fd00:10:96::20"]: IPv6 is not configured on this cluster`},
		{"SingleStack with two families", dualLab, "  ipFamilyPolicy: SingleStack\n  ipFamilies: [IPv4, IPv6]\n",
			`spec.ipFamilyPolicy: Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified`},
		{"two cluster IPs, policy defaulted to SingleStack", dualLab, "  clusterIP: 10.96.0.50\n  clusterIPs: [10.96.0.50, fd00:10:96::50]\n",
			`spec.ipFamilyPolicy: Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified`},
		{"two cluster IPs of one family", dualLab, "  ipFamilyPolicy: PreferDualStack\n  clusterIP: 10.96.0.50\n  clusterIPs: [10.96.0.50, 10.96.0.51]\n",
			`spec.clusterIPs: Invalid value: ["10.96.0.50","10.96.0.51"]: may specify no more than one IP for each IP family`},
		{"three cluster IPs", dualLab, "  ipFamilyPolicy: PreferDualStack\n  clusterIP: 10.96.0.50\n  clusterIPs: [10.96.0.50, fd00:10:96::50, 10.96.0.51]\n",
			`spec.clusterIPs: Invalid value: ["10.96.0.50","fd00:10:96::50","10.96.0.51"]: may only hold up to 2 values`},
		{"None and an IP", dualLab, "  clusterIP: None\n  clusterIPs: [None, 10.96.0.50]\n",
			`spec.clusterIPs: Invalid value: ["None","10.96.0.50"]: 'None' must be the first and only value`},
		{"clusterIPs without clusterIP", dualLab, "  clusterIPs: [10.96.0.50]\n",
			"spec.clusterIPs: Invalid value: [\"10.96.0.50\"]: must be empty when `clusterIP` is not specified"},
		{"clusterIPs[0] other than clusterIP", dualLab, "  clusterIP: 10.96.0.50\n  clusterIPs: [10.96.0.51]\n",
			"spec.clusterIPs: Invalid value: [\"10.96.0.51\"]: first value must match `clusterIP`"},
		{"family and IP disagree", dualLab, "  ipFamilies: [IPv6]\n  clusterIP: 10.96.0.50\n",
			"spec.clusterIPs[0]: Invalid value: \"10.96.0.50\": expected an IPv6 value as indicated by `ipFamilies[0]`"},
		{"a family twice", dualLab, "  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv4, IPv4]\n",
			`spec.ipFamilies[1]: Duplicate value: "IPv4"`},
		{"unknown family", dualLab, "  ipFamilies: [IPv5]\n",
			`spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"`},
		{"unknown policy", dualLab, "  ipFamilyPolicy: Sometimes\n",
			`spec.ipFamilyPolicy: Unsupported value: "Sometimes": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"`},
		{"not an IP", dualLab, "  clusterIP: 10.96.0.050\n",
			`spec.clusterIPs[0]: Invalid value: "10.96.0.050": must not have leading 0s`},
		{"secondary outside the lab's range", dualLab, "  ipFamilyPolicy: RequireDualStack\n  clusterIP: 10.96.0.50\n  clusterIPs: [10.96.0.50, fd00:10:97::1]\n",
			`spec.clusterIPs[1] fd00:10:97::1: outside the lab's serviceSubnet fd00:10:96::/112`},
		{"primary IPv6 outside the lab's range", dualLab, "  clusterIP: fd00:10:97::1\n",
			`spec.clusterIP fd00:10:97::1: outside the lab's serviceSubnet fd00:10:96::/112`},
		{"ExternalName with a policy", dualLab, "  type: ExternalName\n  externalName: a.example\n  ipFamilyPolicy: SingleStack\n",
			`spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services`},
		{"ExternalName with families", dualLab, "  type: ExternalName\n  externalName: a.example\n  ipFamilies: [IPv4]\n",
			`spec.ipFamilies: Forbidden: may not be set for ExternalName services`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tryApply(tc.lab, &labstore.State{}, familyService(tc.lines))
			if err == nil || !strings.HasPrefix(err.Error(), where) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s%s", err, where, tc.want)
			}
		})
	}
}

// TestServiceIPFamilyUpdates: applying a Service again upgrades it to
// dual-stack, downgrades it, or keeps it, as the API server allows
// (kubectl apply's merge keeps the fields the manifest does not name).
func TestServiceIPFamilyUpdates(t *testing.T) {
	const (
		single  = corev1.IPFamilyPolicySingleStack
		prefer  = corev1.IPFamilyPolicyPreferDualStack
		require = corev1.IPFamilyPolicyRequireDualStack
	)
	for _, tc := range []struct {
		name          string
		before, after Cluster
		first, second string
		want          serviceFamilies
		wantErr       string
	}{
		{"applied again: unchanged", dualLab, dualLab, "  ipFamilyPolicy: RequireDualStack\n", "",
			serviceFamilies{require, "IPv4,IPv6", "10.96.0.11,fd00:10:96::b"}, ""},
		{"upgrade to PreferDualStack", dualLab, dualLab, "", "  ipFamilyPolicy: PreferDualStack\n",
			serviceFamilies{prefer, "IPv4,IPv6", "10.96.0.11,fd00:10:96::b"}, ""},
		{"upgrade to RequireDualStack", dualLab, dualLab, "", "  ipFamilyPolicy: RequireDualStack\n",
			serviceFamilies{require, "IPv4,IPv6", "10.96.0.11,fd00:10:96::b"}, ""},
		{"downgrade to SingleStack", dualLab, dualLab, "  ipFamilyPolicy: RequireDualStack\n", "  ipFamilyPolicy: SingleStack\n",
			serviceFamilies{single, "IPv4", "10.96.0.11"}, ""},
		{"releasing the secondary family needs SingleStack", dualLab, dualLab, "  ipFamilyPolicy: RequireDualStack\n", "  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv4]\n",
			serviceFamilies{}, `spec.ipFamilyPolicy: Invalid value: "RequireDualStack": must be 'SingleStack' to release the secondary IP family`},
		{"releasing the secondary cluster IP needs SingleStack", dualLab, dualLab, "  ipFamilyPolicy: PreferDualStack\n", "  ipFamilyPolicy: PreferDualStack\n  clusterIP: 10.96.0.11\n  clusterIPs: [10.96.0.11]\n",
			serviceFamilies{}, `spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be 'SingleStack' to release the secondary cluster IP`},
		{"the primary family may not change", dualLab, dualLab, "", "  ipFamilies: [IPv6]\n",
			serviceFamilies{}, "spec.clusterIPs[0]: Invalid value: \"10.96.0.11\": expected an IPv6 value as indicated by `ipFamilies[0]`"},
		{"the cluster IP may not change", dualLab, dualLab, "  clusterIP: 10.96.0.50\n", "  clusterIP: 10.96.0.60\n",
			serviceFamilies{}, `spec.clusterIPs[0]: Invalid value: ["10.96.0.60"]: may not change once set`},
		{"PreferDualStack is not upgraded when the lab becomes dual", v4Lab, dualLab, "  ipFamilyPolicy: PreferDualStack\n", "  ipFamilyPolicy: PreferDualStack\n",
			serviceFamilies{prefer, "IPv4", "10.96.0.11"}, ""},
		{"RequireDualStack stays refused on a single-stack lab", v4Lab, v4Lab, "", "  ipFamilyPolicy: RequireDualStack\n",
			serviceFamilies{}, `spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
		{"to ExternalName: the cluster IPs and families go", dualLab, dualLab, "  ipFamilyPolicy: RequireDualStack\n  clusterIP: 10.96.0.50\n", "  type: ExternalName\n  externalName: a.example\n",
			serviceFamilies{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := tryApply(tc.before, &labstore.State{}, familyService(tc.first))
			if err != nil {
				t.Fatal(err)
			}
			st, err = tryApply(tc.after, st, familyService(tc.second))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("got %v\nwant %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := familiesOf(st.Service("default", "s")); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestServiceStoredWithoutFamilies: a Service an older svclab stored (no
// ipFamilies) reads as the API server defaults it, so applying it again
// gives it [IPv4] SingleStack and keeps its cluster IP.
func TestServiceStoredWithoutFamilies(t *testing.T) {
	st, err := tryApply(v4Lab, &labstore.State{}, familyService("  clusterIP: 10.96.0.50\n"))
	if err != nil {
		t.Fatal(err)
	}
	stored := st.Service("default", "s")
	stored.Spec.IPFamilies, stored.Spec.IPFamilyPolicy = nil, nil
	if st, err = tryApply(v4Lab, st, familyService("")); err != nil {
		t.Fatal(err)
	}
	if got, want := familiesOf(st.Service("default", "s")), (serviceFamilies{corev1.IPFamilyPolicySingleStack, "IPv4", "10.96.0.50"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestDualStackNodePorts: a node port is one per Service port, whatever
// the Service's families: the node serves it on both.
func TestDualStackNodePorts(t *testing.T) {
	st, err := tryApply(dualLab, &labstore.State{}, familyService("  type: NodePort\n  ipFamilyPolicy: RequireDualStack\n"))
	if err != nil {
		t.Fatal(err)
	}
	svc := st.Service("default", "s")
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].NodePort != NodePortMin || len(svc.Spec.ClusterIPs) != 2 {
		t.Errorf("ports %+v, clusterIPs %v: want one node port %d and two cluster IPs", svc.Spec.Ports, svc.Spec.ClusterIPs, NodePortMin)
	}
}

// TestDualStackPodsAndSlices: on a dual lab a pod gets an address of each
// of its node's pod CIDRs, primary first; a dual-stack Service gets a
// slice per address type, each with the pods' addresses of its type; a
// single-stack IPv6 Service only the IPv6 one.
func TestDualStackPodsAndSlices(t *testing.T) {
	manifest := `
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: s}}
spec: {containers: [{name: c, image: x, ports: [{containerPort: 80}]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: pinned, labels: {app: s}, annotations: {cni.projectcalico.org/ipAddrs: '["fd00:10:244:1::99"]'}}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Service
metadata: {name: s}
spec: {ipFamilyPolicy: PreferDualStack, selector: {app: s}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: six}
spec: {ipFamilies: [IPv6], selector: {app: s}, ports: [{port: 80}]}
`
	st, err := tryApply(dualLab, &labstore.State{}, manifest)
	if err != nil {
		t.Fatal(err)
	}
	web, pinned := st.Pod("web"), st.Pod("pinned")
	if got := []corev1.PodIP{{IP: "10.244.1.2"}, {IP: "fd00:10:244:1::2"}}; web.Status.PodIP != "10.244.1.2" || !slices.Equal(web.Status.PodIPs, got) {
		t.Errorf("web: podIP %s, podIPs %v; want %v", web.Status.PodIP, web.Status.PodIPs, got)
	}
	if got := []corev1.PodIP{{IP: "10.244.1.3"}, {IP: "fd00:10:244:1::99"}}; !slices.Equal(pinned.Status.PodIPs, got) {
		t.Errorf("pinned: podIPs %v; want %v", pinned.Status.PodIPs, got)
	}
	byService := map[string][]string{}
	for _, s := range st.EndpointSlices {
		var addrs []string
		for _, ep := range s.Endpoints {
			addrs = append(addrs, ep.Addresses...)
		}
		if s.Labels[discoveryv1.LabelManagedBy] != controllerManagedBy {
			t.Errorf("slice %s: managed-by %q", s.Name, s.Labels[discoveryv1.LabelManagedBy])
		}
		svc := s.Labels[discoveryv1.LabelServiceName]
		byService[svc] = append(byService[svc], string(s.AddressType)+" "+strings.Join(addrs, ","))
	}
	want := map[string][]string{
		"s":   {"IPv4 10.244.1.2,10.244.1.3", "IPv6 fd00:10:244:1::2,fd00:10:244:1::99"},
		"six": {"IPv6 fd00:10:244:1::2,fd00:10:244:1::99"},
	}
	for svc, w := range want {
		if !slices.Equal(byService[svc], w) {
			t.Errorf("Service %s: slices %q, want %q", svc, byService[svc], w)
		}
	}
}

// TestPodIPAnnotationOnDualLab: the Calico annotation takes one address
// per family, each of the node's pod CIDR of its family.
func TestPodIPAnnotationOnDualLab(t *testing.T) {
	pod := func(addrs string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {cni.projectcalico.org/ipAddrs: '" + addrs + "'}}\nspec: {containers: [{name: c, image: x}]}\n"
	}
	st, err := tryApply(dualLab, &labstore.State{}, pod(`["fd00:10:244:1::7", "10.244.1.7"]`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Pod("p").Status.PodIPs, []corev1.PodIP{{IP: "10.244.1.7"}, {IP: "fd00:10:244:1::7"}}; !slices.Equal(got, want) {
		t.Errorf("podIPs %v, want %v (primary first)", got, want)
	}
	for addrs, want := range map[string]string{
		`["10.244.1.7", "10.244.1.8"]`:                   "want a JSON list of at most one address of each family (IPv4, IPv6)",
		`["fd00:10:244:2::7"]`:                           "not a pod address of node hosta (its pod CIDR fd00:10:244:1::/64",
		`["10.244.1.7", "fd00:10:244:1::7", "10.0.0.1"]`: "want a JSON list of at most one address of each family (IPv4, IPv6)",
	} {
		if _, err := tryApply(dualLab, &labstore.State{}, pod(addrs)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", addrs, err, want)
		}
	}
}

// TestHostNetworkPodGetsNodeIPs: with the node's IPs known, a hostNetwork
// pod reports them.
func TestHostNetworkPodGetsNodeIPs(t *testing.T) {
	c := dualLab
	c.Nodes = []Node{c.Nodes[0]}
	c.Nodes[0].IPs = []netip.Addr{netip.MustParseAddr("192.168.16.73"), netip.MustParseAddr("fd00::c0a8:1049")}
	st, err := tryApply(c, &labstore.State{}, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {hostNetwork: true, containers: [{name: c, image: x}]}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Pod("p").Status.PodIPs, []corev1.PodIP{{IP: "192.168.16.73"}, {IP: "fd00::c0a8:1049"}}; !slices.Equal(got, want) || st.Pod("p").Status.PodIP != "192.168.16.73" {
		t.Errorf("podIPs %v, want %v", got, want)
	}
}

// TestServiceAsRead: a Service stored without families reads as the API
// server defaults it; one with families reads as stored.
func TestServiceAsRead(t *testing.T) {
	stored := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.50", Selector: map[string]string{"app": "s"}}}
	read := v4Lab.ServiceAsRead(stored)
	if got, want := familiesOf(read), (serviceFamilies{corev1.IPFamilyPolicySingleStack, "IPv4", "10.96.0.50"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if stored.Spec.IPFamilies != nil || stored.Spec.ClusterIPs != nil {
		t.Errorf("ServiceAsRead changed the stored Service: %+v", stored.Spec)
	}
	headless := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone}}
	if got, want := familiesOf(dual6Lab.ServiceAsRead(headless)), (serviceFamilies{corev1.IPFamilyPolicyRequireDualStack, "IPv6,IPv4", "None"}); got != want {
		t.Errorf("headless without selector: got %+v, want %+v", got, want)
	}
	st, err := tryApply(dualLab, &labstore.State{}, familyService("  ipFamilyPolicy: PreferDualStack\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := familiesOf(dualLab.ServiceAsRead(st.Service("default", "s"))), familiesOf(st.Service("default", "s")); got != want {
		t.Errorf("a Service stored with families: read %+v, stored %+v", got, want)
	}
}

// TestLoadBalancerAddressOfTheServicesFamily: the lab's pool is IPv4; on a
// dual lab a Service with IPv4 among its families gets a pool address, an
// IPv6-only one stays pending (as MetalLB without a pool of its family),
// and asking for a pool address with IPv6 only is refused.
func TestLoadBalancerAddressOfTheServicesFamily(t *testing.T) {
	lab := dualLab
	lab.LoadBalancerPool = podnet.AddrRange{First: netip.MustParseAddr("192.168.100.10"), Last: netip.MustParseAddr("192.168.100.12")}
	for _, tc := range []struct {
		name, lines, want string
	}{
		{"IPv4", "  type: LoadBalancer\n", "192.168.100.10"},
		{"dual-stack", "  type: LoadBalancer\n  ipFamilyPolicy: PreferDualStack\n", "192.168.100.10"},
		{"IPv6 first, dual-stack", "  type: LoadBalancer\n  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv6, IPv4]\n", "192.168.100.10"},
		{"IPv6 only", "  type: LoadBalancer\n  ipFamilies: [IPv6]\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := tryApply(lab, &labstore.State{}, familyService(tc.lines))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ing := range st.Service("default", "s").Status.LoadBalancer.Ingress {
				got = append(got, ing.IP)
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("ingress %v, want %q", got, tc.want)
			}
		})
	}
	_, err := tryApply(lab, &labstore.State{}, familyService("  type: LoadBalancer\n  ipFamilies: [IPv6]\n  loadBalancerIP: 192.168.100.11\n"))
	if err == nil || !strings.Contains(err.Error(), "is IPv4 and spec.ipFamilies is [IPv6]") {
		t.Errorf("an IPv6 Service asking for a pool address: err = %v", err)
	}
}
