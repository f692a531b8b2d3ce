package workload

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
	"github.com/svclab/svclab/proxy/model"
)

// FuzzApply decodes any manifest and applies it to the in-memory cluster
// state of a lab with a load balancer pool, empty or already running
// httpserver. Decode and
// Apply give objects or an error naming the manifest, never a panic; Apply
// leaves its input alone; what it accepts is a state the lab can run (unique
// pod names and IPs inside their node's pod CIDR, unique cluster IPs inside
// the service subnet, unique node ports and health check node ports, unique
// load balancer IPs inside the pool, slices of existing Services with
// pod IPs) and that applies again; and every node's proxy can program it
// (the iptables payload parses in the fake that rejects what the kernel
// rejects).
func FuzzApply(f *testing.F) {
	f.Add(httpserver, false)
	f.Add(httpserver, true)
	f.Add(podDoc+"---\n"+svcDoc, false)
	f.Add(serviceTypes, true) // the Service types, on the lab with a load balancer pool
	f.Add(badDoc, false)
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: kube-system}\ndata: {a: b}\n", true)
	f.Add("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {cni.projectcalico.org/ipAddrs: '[\"10.100.81.7\"]'}}\nspec: {nodeName: hostb, containers: [{name: c, image: x}]}\n", false)
	// The Service-networking kinds (clusters/workloads/servicenet.yaml is
	// a seed too, below).
	f.Add("apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\n", false)
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n", false)
	f.Add("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: r}}\n  template:\n    metadata: {labels: {app: r}}\n    spec: {containers: [{name: c, image: x, ports: [{containerPort: 80}]}]}\n", true)
	f.Add("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  serviceName: s\n  replicas: 3\n  selector: {matchLabels: {app: s}}\n  template:\n    metadata: {labels: {app: s}}\n    spec: {containers: [{name: c, image: x}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {clusterIP: None, publishNotReadyAddresses: true, selector: {app: s}}\n", false)
	f.Add("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}}\n    spec: {nodeSelector: {kubernetes.io/hostname: hosta}, containers: [{name: c, image: x}]}\n", true)
	f.Add("apiVersion: v1\nkind: Service\nmetadata: {name: e}\nspec: {ports: [{name: p, port: 80}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e-1, labels: {kubernetes.io/service-name: e}}\naddressType: IPv4\nports: [{name: p, port: 8080}]\nendpoints: [{addresses: [10.9.9.9], conditions: {ready: false, serving: true, terminating: true}}]\n", true)
	f.Add("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: f}\naddressType: FQDN\nendpoints: [{addresses: [example.com]}]\n", false)
	// Dual-stack Services: each policy, families in either order, given
	// cluster IPs of both families, headless, and a NodePort one.
	f.Add("apiVersion: v1\nkind: Service\nmetadata: {name: httpserver}\nspec: {ipFamilyPolicy: PreferDualStack, type: NodePort, selector: {app: httpserver}, ports: [{port: 3000}]}\n", true)
	f.Add("apiVersion: v1\nkind: Service\nmetadata: {name: d}\nspec: {ipFamilyPolicy: RequireDualStack, ipFamilies: [IPv6, IPv4], selector: {app: httpserver}, ports: [{port: 80, targetPort: 8080}]}\n", true)
	f.Add("apiVersion: v1\nkind: Service\nmetadata: {name: d}\nspec: {ipFamilyPolicy: RequireDualStack, clusterIP: 10.254.0.40, clusterIPs: [10.254.0.40, 'fd00:10:96::40'], ports: [{port: 80}]}\n", false)
	f.Add("apiVersion: v1\nkind: Service\nmetadata: {name: d}\nspec: {ipFamilies: [IPv6], clusterIP: None, selector: {app: httpserver}}\n", true)
	f.Add("apiVersion: v1\nkind: Service\nmetadata: {name: d}\nspec: {ipFamilyPolicy: SingleStack, ipFamilies: [IPv4, IPv6], ports: [{port: 80}]}\n", false)
	shipped, err := filepath.Glob("../../../clusters/workloads/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range shipped {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), false)
	}
	base, err := Decode([]byte(httpserver), "base.yaml")
	if err != nil {
		f.Fatal(err)
	}
	var labs []fuzzLab
	for _, c := range []Cluster{lbLab, dualFuzzLab} {
		running, err := c.Apply(&labstore.State{}, base, "base.yaml")
		if err != nil {
			f.Fatal(err)
		}
		labs = append(labs, fuzzLab{c, running})
	}
	f.Fuzz(func(t *testing.T, manifest string, onTop bool) {
		for _, l := range labs {
			fuzzApplyOn(t, l, manifest, onTop)
		}
	})
}

// fuzzLab is a lab FuzzApply applies to, and its state running httpserver.
type fuzzLab struct {
	Cluster
	running *labstore.State
}

// dualFuzzLab is lbLab made dual-stack (IPv4 primary).
var dualFuzzLab = func() Cluster {
	c := lbLab
	c.ServiceSubnets = []netip.Prefix{c.ServiceSubnet, netip.MustParsePrefix("fd00:10:96::/112")}
	c.Nodes = nil
	for i, n := range lab.Nodes {
		n.PodCIDRs = []netip.Prefix{n.PodCIDR, netip.MustParsePrefix(fmt.Sprintf("fd00:10:244:%d::/64", i+1))}
		c.Nodes = append(c.Nodes, n)
	}
	return c
}()

// fuzzApplyOn is FuzzApply's check on one lab.
func fuzzApplyOn(t *testing.T, l fuzzLab, manifest string, onTop bool) {
	cur := &labstore.State{}
	if onTop {
		cur = l.running.Clone()
	}
	m, err := Decode([]byte(manifest), "f.yaml")
	if err != nil {
		if !strings.Contains(err.Error(), "f.yaml") {
			t.Fatalf("Decode error %q does not name the manifest", err)
		}
		return
	}
	before := mustJSON(t, cur)
	next, err := l.Apply(cur, m, "f.yaml")
	if after := mustJSON(t, cur); after != before {
		t.Fatalf("Apply changed its input state")
	}
	if err != nil {
		if !strings.Contains(err.Error(), "f.yaml") {
			t.Fatalf("Apply error %q does not name the manifest", err)
		}
		return
	}
	checkState(t, l.Cluster, next)
	if _, err := l.Apply(next, m, "f.yaml"); err != nil {
		t.Fatalf("the manifest applied once but not twice: %v", err)
	}
	for _, n := range l.Nodes {
		checkRenders(t, next, n.Name)
	}
	// kubectl delete -f of what was applied: every object is found,
	// and the state left (pods terminating, then reaped) is one the
	// lab can run.
	deleted, err := l.Delete(next, m, "f.yaml", DeleteOptions{GracePeriod: -1})
	if err != nil {
		if !strings.Contains(err.Error(), "f.yaml") {
			t.Fatalf("Delete error %q does not name the manifest", err)
		}
		return
	}
	checkState(t, l.Cluster, deleted)
	var names []string
	for _, p := range Terminating(deleted) {
		names = append(names, p.Name)
	}
	reaped, err := l.Reconcile(Reap(deleted, names))
	if err != nil {
		t.Fatalf("Reap and Reconcile: %v", err)
	}
	checkState(t, l.Cluster, reaped)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkState states what the lab relies on in a state Apply returned:
// pods' IPs (one per pod CIDR of their node, the primary first) unique
// and in their node's pod CIDRs, cluster IPs (clusterIP == clusterIPs[0],
// one per family of ipFamilies) unique and in the lab's Service range of
// their family, node ports and load balancer IPs unique, the controller's
// slices of existing Services with pod IPs of their address type.
func checkState(t *testing.T, c Cluster, st *labstore.State) {
	t.Helper()
	nodes := map[string][]netip.Prefix{}
	for _, n := range c.Nodes {
		nodes[n.Name] = n.podCIDRs()
	}
	podNames, podIPs := map[string]bool{}, map[string]string{}
	for _, p := range st.Pods {
		if podNames[p.Name] {
			t.Errorf("two pods named %s", p.Name)
		}
		podNames[p.Name] = true
		cidrs, ok := nodes[p.Spec.NodeName]
		if !ok {
			t.Errorf("pod %s on unknown node %q", p.Name, p.Spec.NodeName)
		}
		if len(p.Status.PodIPs) != len(cidrs) || p.Status.PodIP != p.Status.PodIPs[0].IP {
			t.Errorf("pod %s: podIP %s, podIPs %v: want one per pod CIDR %v, the first as podIP", p.Name, p.Status.PodIP, p.Status.PodIPs, cidrs)
			continue
		}
		for i, ip := range p.Status.PodIPs {
			a, err := netip.ParseAddr(ip.IP)
			if err != nil || !cidrs[i].Contains(a) {
				t.Errorf("pod %s: IP %q outside its node's pod CIDR %s", p.Name, ip.IP, cidrs[i])
			}
			if other, dup := podIPs[ip.IP]; dup {
				t.Errorf("pods %s and %s share IP %s", other, p.Name, ip.IP)
			}
			podIPs[ip.IP] = p.Name
		}
	}
	clusterIPs, nodePorts, lbIPs := map[string]string{}, map[int32]string{}, map[netip.Addr]string{}
	for _, svc := range st.Services {
		name := svc.Namespace + "/" + svc.Name
		if svc.Spec.ClusterIP != corev1.ClusterIPNone && svc.Spec.Type != corev1.ServiceTypeExternalName {
			checkClusterIPs(t, c, svc, clusterIPs)
		}
		if vip := LoadBalancerIngress(svc); vip.IsValid() {
			if !lbLab.LoadBalancerPool.Contains(vip) {
				t.Errorf("Service %s: load balancer IP %s outside the pool %s", name, vip, lbLab.LoadBalancerPool)
			}
			if other, dup := lbIPs[vip]; dup {
				t.Errorf("Services %s and %s share load balancer IP %s", other, name, vip)
			}
			lbIPs[vip] = name
		}
		for _, p := range append(svc.Spec.Ports, corev1.ServicePort{NodePort: svc.Spec.HealthCheckNodePort, Protocol: "health check"}) {
			if p.NodePort == 0 {
				continue
			}
			key := fmt.Sprintf("%s:%s", name, p.Protocol)
			if other, dup := nodePorts[p.NodePort]; dup && !strings.HasPrefix(other, name+":") {
				t.Errorf("Services %s and %s share node port %d", other, key, p.NodePort)
			}
			nodePorts[p.NodePort] = key
		}
	}
	for _, s := range st.EndpointSlices {
		if s.Labels["endpointslice.kubernetes.io/managed-by"] != controllerManagedBy {
			continue // hand-written: any addresses, of any Service or none
		}
		if st.Service(s.Namespace, s.Labels["kubernetes.io/service-name"]) == nil {
			t.Errorf("EndpointSlice %s/%s of no Service", s.Namespace, s.Name)
		}
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				if _, ok := podIPs[a]; !ok {
					t.Errorf("EndpointSlice %s/%s: address %s is no pod's", s.Namespace, s.Name, a)
				}
				if (familyOf(a) == corev1.IPv6Protocol) != (s.AddressType == "IPv6") {
					t.Errorf("EndpointSlice %s/%s of type %s: address %s", s.Namespace, s.Name, s.AddressType, a)
				}
			}
		}
	}
}

// checkClusterIPs: svc's cluster IPs are one per family, in the lab's
// range of it, and no other Service's (taken: IP -> Service).
func checkClusterIPs(t *testing.T, c Cluster, svc *corev1.Service, taken map[string]string) {
	t.Helper()
	name := svc.Namespace + "/" + svc.Name
	s := svc.Spec
	if len(s.ClusterIPs) != len(s.IPFamilies) || len(s.ClusterIPs) == 0 || s.ClusterIP != s.ClusterIPs[0] {
		t.Errorf("Service %s: clusterIP %s, clusterIPs %v, ipFamilies %v: want one per family, the first as clusterIP", name, s.ClusterIP, s.ClusterIPs, s.IPFamilies)
		return
	}
	for i, ip := range s.ClusterIPs {
		subnet, _ := c.serviceSubnetOf(s.IPFamilies[i])
		a, err := netip.ParseAddr(ip)
		if err != nil || !subnet.Contains(a) {
			t.Errorf("Service %s: cluster IP %q outside %s", name, ip, subnet)
		}
		if other, dup := taken[ip]; dup {
			t.Errorf("Services %s and %s share cluster IP %s", other, name, ip)
		}
		taken[ip] = name
	}
}

// checkRenders renders the state as node's iptables proxy would and applies
// it to the fake that validates like the kernel.
func checkRenders(t *testing.T, st *labstore.State, node string) {
	t.Helper()
	r, err := iptables.NewRenderer(iptables.Options{ClusterCIDR: "10.100.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Render(model.Build(st.Services, st.EndpointSlices, node))
	if err := iptablestest.NewFakeRunner().Restore(res.Payload()); err != nil {
		t.Fatalf("node %s: the rendered rules do not restore: %v", node, err)
	}
}
