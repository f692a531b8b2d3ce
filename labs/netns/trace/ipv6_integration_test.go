package trace_test

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/netns/trace"
)

// familyServer is one netexec pod on hostb behind a NodePort Service
// (3000:30000) of the lab's families: PreferDualStack, a ClusterIP and
// node port in each family of a dual lab, one in an ipv6 lab.
const familyServer = `apiVersion: apps/v1
kind: Deployment
metadata: {name: httpserver}
spec:
  replicas: 1
  selector: {matchLabels: {app: httpserver}}
  template:
    metadata: {labels: {app: httpserver}}
    spec:
      nodeName: hostb
      containers:
      - name: httpserver
        image: svclab/netexec:dev
        ports: [{name: http, containerPort: 3000}]
---
apiVersion: v1
kind: Service
metadata: {name: httpserver}
spec:
  type: NodePort
  ipFamilyPolicy: PreferDualStack
  selector: {app: httpserver}
  ports: [{name: http, port: 3000, targetPort: http, nodePort: 30000}]
`

// familyNodePortLab is clusters/nodeport.yaml as a lab of family f with
// the CNI cni under a unique name, with familyServer applied.
func familyNodePortLab(t *testing.T, cni topology.CNI, f topology.IPFamily) *netns.Lab {
	t.Helper()
	data, err := os.ReadFile("../../../clusters/nodeport.yaml")
	if err != nil {
		t.Fatal(err)
	}
	name := roottest.UniqueName("trace6")
	text := strings.Replace(string(data), "name: nodeport", "name: "+name, 1)
	text = regexp.MustCompile(`(?m)^  cni: .*$`).ReplaceAllString(text, "  cni: "+string(cni)+"\n  ipFamily: "+string(f))
	dir := t.TempDir()
	file, manifest := filepath.Join(dir, "lab.yaml"), filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(familyServer), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := netns.Options{Binary: roottest.SharedBinary(t), Timeout: 5 * time.Minute}
	l, _, err := netns.Create(context.Background(), file, opts)
	t.Cleanup(func() {
		if err := netns.Delete(name); err != nil {
			t.Errorf("delete lab %s: %v", name, err)
		}
		if ns, _ := network.Namespaces(name); len(ns) > 0 {
			t.Errorf("lab %s left namespaces %v", name, ns)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Apply(context.Background(), manifest, opts); err != nil {
		t.Fatal(err)
	}
	return l
}

// serverPodIP is the httpserver pod's name and its address of family f.
func serverPodIP(t *testing.T, l *netns.Lab, f topology.IPFamily) (string, netip.Addr) {
	t.Helper()
	objs, _, err := l.Store.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range objs.Pods {
		if !strings.HasPrefix(p.Name, "httpserver-") {
			continue
		}
		for _, ip := range p.Status.PodIPs {
			if a := netip.MustParseAddr(ip.IP); topology.FamilyOf(a) == f {
				return p.Name, a
			}
		}
	}
	t.Fatalf("no httpserver pod with an %s address", f)
	return "", netip.Addr{}
}

// TestIntegrationTraceNodePortDualStack traces the cross-node NodePort of
// a dual-stack lab in each family: the client opens hosta's node port at
// its IPv6 address, then at its IPv4 one, served by the pod on hostb. In
// IPv6 the trace reads ip6tables counters, the inet6 conntrack entries
// (DNAT to the pod's IPv6 address, SNAT to hosta's flannel-v6.1 address),
// and the flannel-v6.1 VXLAN hop over the nodes' IPv6 underlay; in IPv4
// the same as in an IPv4 lab.
func TestIntegrationTraceNodePortDualStack(t *testing.T) {
	roottest.Require(t, "creates labs of network namespaces")
	l := familyNodePortLab(t, topology.CNIFlannelVXLAN, topology.IPFamilyDual)
	nodes := l.Topology.Spec.Nodes
	for _, f := range []topology.IPFamily{topology.IPFamilyIPv6, topology.IPFamilyIPv4} {
		t.Run(string(f), func(t *testing.T) {
			pod, ip := serverPodIP(t, l, f)
			hosta, hostb := topology.OfFamily(nodes[0].IPs, f).Addr(), topology.OfFamily(nodes[1].IPs, f).Addr()
			r, err := trace.Trace(context.Background(), l, "client", netip.AddrPortFrom(hosta, 30000), trace.Options{Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			if err := trace.WriteText(&text, r); err != nil {
				t.Fatal(err)
			}
			t.Logf("trace:\n%s", text.String())
			s := r.Summary
			if r.Error != "" || r.Answer != pod || s.Reached != pod {
				t.Errorf("answer %q (error %q), reached %q; want the pod %s", r.Answer, r.Error, s.Reached, pod)
			}
			if s.Endpoint != netip.AddrPortFrom(ip, 3000) || !strings.HasPrefix(s.ConfirmedSEP, "KUBE-SEP-") {
				t.Errorf("conntrack's endpoint %s confirming %q, want %s:3000 and its KUBE-SEP chain", s.Endpoint, s.ConfirmedSEP, ip)
			}
			if !hasPrefix(s.ServiceChains, "KUBE-EXT-") || !hasPrefix(s.ServiceChains, "KUBE-SVC-") {
				t.Errorf("service chains %v, want KUBE-EXT- and KUBE-SVC-", s.ServiceChains)
			}
			if topology.FamilyOf(s.Masquerade) != f || s.MasqueradeOn != "hosta" {
				t.Errorf("masquerade %s on %s, want an %s address of hosta", s.Masquerade, s.MasqueradeOn, f)
			}
			device := "flannel.1"
			if f == topology.IPFamilyIPv6 {
				device = "flannel-v6.1"
			}
			if len(s.VXLAN) != 1 || s.VXLAN[0].From != "hosta" || s.VXLAN[0].To != "hostb" || s.VXLAN[0].Dev != device ||
				s.VXLAN[0].Local != hosta || s.VXLAN[0].Remote != hostb {
				t.Errorf("VXLAN hops %+v, want hosta → hostb over %s, underlay %s → %s", s.VXLAN, device, hosta, hostb)
			}
			if !strings.Contains(text.String(), "conntrack: tcp 6 ") || !strings.Contains(text.String(), " dst="+hosta.String()+" sport=") {
				t.Errorf("the text shows no conntrack entry of the connection to %s", hosta)
			}
		})
	}
}

// TestIntegrationTraceFromCalicoPodIPv6 traces from a Calico pod of an
// ipv6 lab to its own Service: the pod's default route goes via Calico's
// link-local gateway fe80::ecee:eeff:feee:eeee, which every node's
// host-side veths hold, so the next hop is the pod's own node (hostb),
// where conntrack shows the hairpin's DNAT and SNAT.
func TestIntegrationTraceFromCalicoPodIPv6(t *testing.T) {
	roottest.Require(t, "creates labs of network namespaces")
	l := familyNodePortLab(t, topology.CNICalicoProxyARP, topology.IPFamilyIPv6)
	pod, ip := serverPodIP(t, l, topology.IPFamilyIPv6)
	svc := topology.OfFamily(l.Topology.Spec.ServiceSubnets, topology.IPFamilyIPv6)
	objs, _, err := l.Store.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	var clusterIP netip.Addr
	for _, s := range objs.Services {
		if s.Name == "httpserver" {
			clusterIP = netip.MustParseAddr(s.Spec.ClusterIP)
		}
	}
	if !svc.Contains(clusterIP) {
		t.Fatalf("httpserver's ClusterIP %s, want one of %s", clusterIP, svc)
	}
	r, err := trace.Trace(context.Background(), l, pod, netip.AddrPortFrom(clusterIP, 3000), trace.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := trace.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	t.Logf("trace:\n%s", text.String())
	if len(r.Hops) != 3 || r.Hops[1].Host != "hostb" || r.Hops[0].Route == nil || !r.Hops[0].Route.Gateway.IsLinkLocalUnicast() {
		t.Fatalf("hops %v, want the pod, via its link-local gateway to hostb, then the pod", hostNames(r))
	}
	s := r.Summary
	if r.Answer != pod || s.Reached != pod || s.Endpoint != netip.AddrPortFrom(ip, 3000) || s.MasqueradeOn != "hostb" {
		t.Errorf("answer %q, reached %q, endpoint %s, masquerade on %q; want %s, %s:3000 and the hairpin's SNAT on hostb",
			r.Answer, s.Reached, s.Endpoint, s.MasqueradeOn, pod, ip)
	}
}

func hostNames(r *trace.Result) []string {
	var out []string
	for _, h := range r.Hops {
		out = append(out, h.Host)
	}
	return out
}
