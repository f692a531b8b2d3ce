package loadbalancer

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/podnet"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var pool = podnet.AddrRange{First: netip.MustParseAddr("172.18.255.224"), Last: netip.MustParseAddr("172.18.255.226")}

// svc is a Service created at minute age, of type typ, holding ips.
func svc(name string, age int, typ corev1.ServiceType, ips ...string) corev1.Service {
	s := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, age, 0, 0, time.UTC))},
		Spec: corev1.ServiceSpec{Type: typ}}
	for _, ip := range ips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, Ingress(netip.MustParseAddr(ip))...)
	}
	return s
}

func change(name, ip string) Change {
	c := Change{Namespace: "ns", Name: name}
	if ip != "" {
		c.Ingress = Ingress(netip.MustParseAddr(ip))
	}
	return c
}

func TestPlan(t *testing.T) {
	lb, cip := corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP
	other := "example.com/other"
	otherClass := svc("other", 0, lb, "172.18.255.225")
	otherClass.Spec.LoadBalancerClass = &other
	mine := svc("mine", 5, lb)
	class := Class
	mine.Spec.LoadBalancerClass = &class
	asks := svc("asks", 6, lb)
	asks.Spec.LoadBalancerIP = "172.18.255.226"
	asksOutside := svc("outside", 6, lb)
	asksOutside.Spec.LoadBalancerIP = "10.0.0.1"
	ipv6Only := svc("v6", 1, lb)
	ipv6Only.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	ipv6Had := svc("v6had", 1, lb, "172.18.255.224")
	ipv6Had.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	dualStack := svc("dual", 1, lb)
	dualStack.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
	for _, tc := range []struct {
		name string
		in   []corev1.Service
		want []Change
	}{
		{"a new LoadBalancer gets the lowest address", []corev1.Service{svc("a", 1, lb)}, []Change{change("a", "172.18.255.224")}},
		{"one that has an address keeps it", []corev1.Service{svc("a", 1, lb, "172.18.255.225"), svc("b", 2, lb)},
			[]Change{change("b", "172.18.255.224")}},
		{"a ClusterIP Service gets nothing", []corev1.Service{svc("a", 1, cip)}, nil},
		{"one that stopped being a LoadBalancer gives its address back, and the next one gets it",
			[]corev1.Service{svc("a", 1, cip, "172.18.255.224"), svc("b", 2, lb)},
			[]Change{change("a", ""), change("b", "172.18.255.224")}},
		{"another load balancer's Services are left alone", []corev1.Service{otherClass, svc("b", 2, lb)},
			[]Change{change("b", "172.18.255.224")}},
		{"svclab's class is served", []corev1.Service{mine}, []Change{change("mine", "172.18.255.224")}},
		{"spec.loadBalancerIP in the pool is honoured", []corev1.Service{asks}, []Change{change("asks", "172.18.255.226")}},
		{"spec.loadBalancerIP outside the pool is not", []corev1.Service{asksOutside}, []Change{change("outside", "172.18.255.224")}},
		{"an address two Services claim stays with the older one",
			[]corev1.Service{svc("young", 2, lb, "172.18.255.224"), svc("old", 1, lb, "172.18.255.224")},
			[]Change{change("young", "172.18.255.225")}},
		{"an address outside the pool is replaced", []corev1.Service{svc("a", 1, lb, "10.1.1.1")}, []Change{change("a", "172.18.255.224")}},
		{"an exhausted pool leaves the next one pending",
			[]corev1.Service{svc("a", 1, lb), svc("b", 2, lb), svc("c", 3, lb), svc("d", 4, lb)},
			[]Change{change("a", "172.18.255.224"), change("b", "172.18.255.225"), change("c", "172.18.255.226")}},
		{"an IPv6-only Service gets no address of the IPv4 pool", []corev1.Service{ipv6Only}, nil},
		{"an IPv6-only Service holding one gives it back", []corev1.Service{ipv6Had}, []Change{change("v6had", "")}},
		{"a dual-stack Service gets the IPv4 pool's address", []corev1.Service{dualStack}, []Change{change("dual", "172.18.255.224")}},
		{"nothing to do when all hold theirs",
			[]corev1.Service{svc("a", 1, lb, "172.18.255.226"), svc("b", 2, cip)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Plan(pool, tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Plan:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// The manifest runs the command line the CLI parses, with the pool.
func TestManifest(t *testing.T) {
	m, err := Manifest(ManifestParams{Image: "svclab/svclab:dev", Pool: "172.18.255.224-172.18.255.254", APIServerHost: "demo-control-plane", APIServerPort: "6443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`args: ["loadbalancer","--pool=172.18.255.224-172.18.255.254"]`, "resources: [services/status]", `value: "demo-control-plane"`} {
		if !contains(m, want) {
			t.Errorf("manifest lacks %q:\n%s", want, m)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
