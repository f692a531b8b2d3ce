package netns_test

import (
	"context"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/svclab/svclab/internal/netnsdial"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
)

const twoNodes = `
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: NAME}
spec:
  cni: flannel-vxlan
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  proxy: {mode: iptables}
  nodes:
  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}
  - {name: node2, ip: 192.168.16.139/20, podCIDR: 10.244.2.0/24}
  clients:
  - {name: client, ip: 192.168.55.230/24}
`

// dnsWorkload: a ClusterIP Service over two pods (one per node), a headless
// Service over the same pods, a StatefulSet-like pod (hostname and
// subdomain) under its headless Service, and an ExternalName Service, all
// in namespace demo.
const dnsWorkload = `
apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: svclab/netexec:dev, ports: [{name: http, containerPort: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web-headless, namespace: demo}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: http, port: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: demo, labels: {app: db}}
spec:
  hostname: db-0
  subdomain: db
  nodeName: node1
  containers: [{name: c, image: svclab/netexec:dev, ports: [{containerPort: 5432}]}]
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: demo}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: pg, port: 5432}]
---
apiVersion: v1
kind: Service
metadata: {name: search, namespace: demo}
spec: {type: ExternalName, externalName: search.example.com}
`

// TestIntegrationClusterDNS: on a two-node netns lab, pods and the outside
// client resolve Service names through kube-dns's ClusterIP with the
// kubelet's search path; the queries go through the proxy's UDP rules
// (conntrack on the asking pod's node shows them DNATed to the coredns
// pod) and its TCP rules; nothing outside the cluster domain resolves; and
// delete leaves no resolv.conf behind.
func TestIntegrationClusterDNS(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	name := roottest.UniqueName("dns")
	file := writeFile(t, "lab.yaml", strings.ReplaceAll(twoNodes, "NAME", name))
	opts := netns.Options{Binary: roottest.SharedBinary(t)}
	lab, took, err := netns.Create(context.Background(), file, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netns.Delete(name) })
	t.Logf("bring-up took %s", took)
	if err := lab.Apply(context.Background(), writeFile(t, "web.yaml", dnsWorkload), opts); err != nil {
		t.Fatal(err)
	}
	objs, _, err := lab.Store.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	clusterIP := objs.Service("demo", "web").Spec.ClusterIP
	var webIPs []string
	var webOnNode2, coreDNS, coreDNSIP string
	for _, p := range objs.Pods {
		switch {
		case p.Labels["app"] == "web":
			webIPs = append(webIPs, p.Status.PodIP)
			if p.Spec.NodeName == "node2" {
				webOnNode2 = p.Name
			}
		case p.Labels["k8s-app"] == "kube-dns":
			coreDNS, coreDNSIP = p.Name, p.Status.PodIP
		}
	}
	slices.Sort(webIPs)
	if webOnNode2 == "" || coreDNS == "" || len(webIPs) != 2 {
		t.Fatalf("pods: web %v (on node2: %q), coredns %q", webIPs, webOnNode2, coreDNS)
	}
	db0 := objs.Pod("db-0").Status.PodIP

	t.Run("resolv.conf as svclab exec sees it", func(t *testing.T) {
		for host, search := range map[string]string{webOnNode2: "search demo.svc.cluster.local svc.cluster.local cluster.local", "client": "search default.svc.cluster.local"} {
			out := run(t, lab, host, "cat", "/etc/resolv.conf")
			for _, want := range []string{search, "nameserver 10.96.0.10", "options ndots:5"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s: /etc/resolv.conf lacks %q:\n%s", host, want, out)
				}
			}
		}
	})

	// Each lookup as a program in the pod makes it: getent through libc,
	// with the search path and ndots:5 of the host's resolv.conf.
	for _, c := range []struct {
		from, name string
		want       []string
	}{
		{webOnNode2, "web.demo.svc.cluster.local", []string{clusterIP}},
		{webOnNode2, "web", []string{clusterIP}}, // the search path
		{webOnNode2, "kube-dns.kube-system", []string{"10.96.0.10"}},
		{webOnNode2, "web-headless.demo.svc.cluster.local", webIPs},
		{webOnNode2, "db-0.db.demo.svc.cluster.local", []string{db0}},
		{coreDNS, "web.demo.svc.cluster.local", []string{clusterIP}}, // the DNS pod itself (dnsPolicy Default)
		{"client", "web.demo", []string{clusterIP}},
		{"node1", "web-headless.demo.svc.cluster.local", webIPs},
	} {
		t.Run(c.from+" resolves "+c.name, func(t *testing.T) {
			if got := resolve(t, lab, c.from, c.name); !slices.Equal(got, c.want) {
				t.Errorf("getent ahostsv4 %s in %s: %v, want %v", c.name, c.from, got, c.want)
			}
		})
	}

	t.Run("names outside the cluster do not resolve", func(t *testing.T) {
		cmd, err := lab.Command(webOnNode2, "getent", "ahostsv4", "www.example.com")
		if err != nil {
			t.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("www.example.com resolved from a lab pod: %s", out)
		}
	})

	t.Run("conntrack shows the UDP queries DNATed to the coredns pod", func(t *testing.T) {
		nodeNS := network.NamespaceName(name, "node2")
		flows, err := conntrack.Dump(nodeNS)
		if err != nil {
			t.Fatal(err)
		}
		dnsVIP := netip.AddrPortFrom(netip.MustParseAddr("10.96.0.10"), 53)
		found := 0
		for _, f := range flows {
			if f.Proto == 17 && f.Orig.Dst == dnsVIP && f.DstNAT() && f.Reply.Src == netip.AddrPortFrom(netip.MustParseAddr(coreDNSIP), 53) {
				found++
			}
		}
		if found == 0 {
			t.Errorf("node2's conntrack has no UDP flow to %s DNATed to %s:53; flows: %v", dnsVIP, coreDNSIP, flows)
		}
		// And as the conntrack program prints it.
		out := run(t, lab, "node2", "conntrack", "-L", "-p", "udp", "--orig-dst", "10.96.0.10")
		if !strings.Contains(out, "dport=53 src="+coreDNSIP+" ") {
			t.Errorf("conntrack -L -p udp on node2 shows no reply from %s:\n%s", coreDNSIP, out)
		}
	})

	t.Run("TCP queries go through kube-dns:dns-tcp", func(t *testing.T) {
		dial := netnsdial.Dialer(network.NamespaceName(name, webOnNode2))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := dial(ctx, "tcp", "10.96.0.10:53")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
		q := new(dns.Msg)
		q.SetQuestion("_http._tcp.web.demo.svc.cluster.local.", dns.TypeSRV)
		resp, _, err := c.ExchangeWithConn(q, &dns.Conn{Conn: conn})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Answer) != 1 || resp.Answer[0].(*dns.SRV).Port != 80 {
			t.Errorf("SRV _http._tcp.web.demo over TCP: %v", resp)
		}
		// An ExternalName Service is a CNAME (and its target is not chased:
		// nothing outside the cluster domain is resolved).
		q.SetQuestion("search.demo.svc.cluster.local.", dns.TypeA)
		resp, _, err = c.ExchangeWithConn(q, &dns.Conn{Conn: conn})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Answer) != 1 || resp.Answer[0].(*dns.CNAME).Target != "search.example.com." {
			t.Errorf("A search.demo (ExternalName) over TCP: %v", resp)
		}
	})

	t.Run("a new Service resolves once applied", func(t *testing.T) {
		more := "apiVersion: v1\nkind: Service\nmetadata: {name: later, namespace: demo}\nspec: {selector: {app: web}, ports: [{port: 81, targetPort: 8080}]}\n"
		if err := lab.Apply(context.Background(), writeFile(t, "later.yaml", more), opts); err != nil {
			t.Fatal(err)
		}
		objs, _, _ := lab.Store.ReadObjects()
		want := objs.Service("demo", "later").Spec.ClusterIP
		// The coredns pod follows the store (inotify): poll the answer, for
		// 30 s at most on a loaded host.
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := resolve(t, lab, webOnNode2, "later")
			if slices.Equal(got, []string{want}) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("later: %v, want %s", got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})

	if err := netns.Delete(name); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(network.EtcNetnsDir, network.NamespaceName(name, "*")))
	if len(left) > 0 {
		t.Errorf("delete left %v", left)
	}
	assertGone(t, name)
}

// resolve runs `getent ahostsv4 NAME` in a lab host and returns the
// addresses, sorted and without duplicates (nil when it does not resolve).
func resolve(t *testing.T, lab *netns.Lab, host, name string) []string {
	t.Helper()
	cmd, err := lab.Command(host, "getent", "ahostsv4", name)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	var ips []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !slices.Contains(ips, f[0]) {
			ips = append(ips, f[0])
		}
	}
	slices.Sort(ips)
	return ips
}

func run(t *testing.T, lab *netns.Lab, host string, args ...string) string {
	t.Helper()
	cmd, err := lab.Command(host, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in %s: %v\n%s", strings.Join(args, " "), host, err, out)
	}
	return string(out)
}
