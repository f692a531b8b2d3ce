package conformance

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/scenarios/kit"
)

// A ClusterIP Service with a TCP and a UDP port of the same number, over
// pods that serve both protocols on one target port: every endpoint
// answers over each protocol; where the proxy is kube-proxy (or svclab's),
// each UDP exchange is a conntrack entry DNATed to the pod that answered.
//
// Upstream (test/e2e/network/service.go, "[sig-network] Services"):
// "should serve endpoints on same port and different protocols
// [Conformance]" and "should serve a basic endpoint from pods
// [Conformance]".
func (s *suite) clusterIPSpecs(f familyRun) {
	Describe(f.text("ClusterIP over TCP and UDP on one port number"), Ordered, f.labels(), Label("clusterip", "udp"), func() {
		var (
			svc   *corev1.Service
			pods  []corev1.Pod
			probe corev1.Pod
		)
		ws := s.workspace(f, "clusterip", 1, func(context.Context, kit.Workspace) string { return s.bothProtocolsService(2) })
		BeforeAll(func(ctx SpecContext) {
			svc, pods, probe = readService(ctx, *ws, "both", "both", 2)
		})
		s.evidenceOnFailure(func() evidenceSubject { return clusterIPEvidence(*ws, svc, podClient(probe), 80) }) // evidence_subjects.go
		vip := func() netip.AddrPort { return netip.AddrPortFrom(netip.MustParseAddr(svc.Spec.ClusterIP), 80) }
		from := func() kit.Client { return kit.Client{Pod: probe.Name, Node: probe.Spec.NodeName} }

		It("answers from every endpoint over TCP on port 80", func(ctx SpecContext) {
			everyEndpointAnswers(ctx, *ws, from(), vip(), traffic.ProtocolTCP, podNames(pods))
		})

		It("answers from every endpoint over UDP on port 80, each exchange a conntrack entry DNATed to the pod that answered", func(ctx SpecContext) {
			res := everyEndpointAnswers(ctx, *ws, from(), vip(), traffic.ProtocolUDP, podNames(pods))
			if reason := s.proxy(ctx).NotKubeProxyReason(); reason != "" {
				By("conntrack entries not checked: " + reason)
				return
			}
			podAddr := map[string]netip.AddrPort{}
			for _, p := range pods {
				podAddr[p.Name] = netip.AddrPortFrom(netip.MustParseAddr(p.Status.PodIP), 8080)
			}
			backendOf := map[netip.AddrPort]string{}
			for _, c := range res.Connections {
				backendOf[netip.MustParseAddrPort(c.LocalAddress)] = c.Backend
			}
			mine := trackedFlows(ctx, protocolView{*ws, protoUDP}, probe.Spec.NodeName, vip(), kit.ClientAddrs(res))
			Expect(mine).To(HaveLen(res.Succeeded), "one UDP conntrack entry per exchange on %s", probe.Spec.NodeName)
			for _, f := range mine {
				Expect(f.Reply.Src).To(Equal(podAddr[backendOf[f.Orig.Src]]), "conntrack %v: the reply comes from the pod that answered (%s)", f, backendOf[f.Orig.Src])
				Expect(f.DstNAT()).To(BeTrue(), "conntrack %v: DNAT status bit", f)
			}
		})
	})
}

// A Service with two named ports whose target ports are named container
// ports of two different pods: each Service port reaches only the pod
// that has its target port, over TCP and over UDP.
//
// Upstream (test/e2e/network/service.go): "should serve multiport
// endpoints from pods [Conformance]" (Service ports portname1 → svc1,
// portname2 → svc2, one pod each).
func (s *suite) multiPortSpecs(f familyRun) {
	Describe(f.text("multi-port Service: two named ports to two pods' named target ports"), Ordered, f.labels(), Label("clusterip", "multiport", "udp"), func() {
		var (
			svc   *corev1.Service
			probe corev1.Pod
		)
		ws := s.workspace(f, "multiport", 1, func(context.Context, kit.Workspace) string { return s.multiPortService() })
		BeforeAll(func(ctx SpecContext) {
			svc, _, probe = readService(ctx, *ws, "multi", "multi", 2)
		})
		s.evidenceOnFailure(func() evidenceSubject { return clusterIPEvidence(*ws, svc, podClient(probe), 80) }) // evidence_subjects.go

		It("sends port 80 to the pod with target port svc1 and port 81 to the one with svc2, over TCP and UDP", func(ctx SpecContext) {
			const n = 10
			from := kit.Client{Pod: probe.Name, Node: probe.Spec.NodeName}
			for _, tt := range []struct {
				port     uint16
				protocol string
				pod      string
			}{
				{80, traffic.ProtocolTCP, "multi-1"}, {81, traffic.ProtocolTCP, "multi-2"},
				{80, traffic.ProtocolUDP, "multi-1"}, {81, traffic.ProtocolUDP, "multi-2"},
			} {
				target := netip.AddrPortFrom(netip.MustParseAddr(svc.Spec.ClusterIP), tt.port)
				By(fmt.Sprintf("%d %s exchanges with %s: only %s answers", n, tt.protocol, target, tt.pod))
				res, err := (*ws).TrafficWith(ctx, from, target, kit.TrafficOptions{Connections: n, Protocol: tt.protocol})
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Backends).To(Equal(map[string]int{tt.pod: n}), "%s %s: every exchange answered by %s: %s", tt.protocol, target, tt.pod, kit.DescribeTraffic(res))
			}
		})
	})
}

// everyEndpointAnswers sends connections (or UDP exchanges) from a client
// to target until the chance that a fair split leaves out one of the
// endpoints is below 1e-9, and asserts that every one answered them, and
// only the endpoints did.
func everyEndpointAnswers(ctx context.Context, ws kit.Workspace, from kit.Client, target netip.AddrPort, protocol string, endpoints []string) *traffic.Result {
	GinkgoHelper()
	// P(some endpoint gets none) ≤ k (1 − 1/k)^n under a uniform split.
	k := float64(len(endpoints))
	n := int(math.Ceil(math.Log(1e-9/k) / math.Log(1-1/k)))
	By(fmt.Sprintf("%d %s exchanges from %s to %s: a fair split leaves out one of %d endpoints with probability below 1e-9", n, protocol, from.Pod, target, len(endpoints)))
	res, err := ws.TrafficWith(ctx, from, target, kit.TrafficOptions{Connections: n, Protocol: protocol})
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Succeeded).To(Equal(n), "every %s exchange answers: %s", protocol, kit.DescribeTraffic(res))
	Expect(slices.Sorted(maps.Keys(res.Backends))).To(Equal(endpoints), "every endpoint answers over %s, and only they do: %v", protocol, res.Backends)
	return res
}

// readService reads a workspace's Service, its pods labelled app=<app>
// (want of them) and the probe pod.
func readService(ctx context.Context, ws kit.Workspace, name, app string, want int) (*corev1.Service, []corev1.Pod, corev1.Pod) {
	GinkgoHelper()
	svc, err := ws.Service(ctx, name)
	Expect(err).NotTo(HaveOccurred())
	pods, err := ws.Pods(ctx, app)
	Expect(err).NotTo(HaveOccurred())
	Expect(pods).To(HaveLen(want))
	probes, err := ws.Pods(ctx, "probe")
	Expect(err).NotTo(HaveOccurred())
	Expect(probes).To(HaveLen(1))
	return svc, pods, probes[0]
}

// bothProtocolsService is a Deployment "both" of `replicas` pods serving
// HTTP and UDP on 8080, a ClusterIP Service "both" with port 80 over TCP
// and over UDP to 8080, and the probe pod.
func (s *suite) bothProtocolsService(replicas int) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: both}
spec:
  replicas: %d
  selector: {matchLabels: {app: both}}
  template:
    metadata: {labels: {app: both}}
    spec:
      %s
      containers:
      %s
---
apiVersion: v1
kind: Service
metadata: {name: both}
spec:
  selector: {app: both}
  ports:
  - {name: tcp, port: 80, targetPort: 8080, protocol: TCP}
  - {name: udp, port: 80, targetPort: 8080, protocol: UDP}
%s`, replicas, tolerateAll, s.bothProtocolsContainer("netexec", 8080, "", ""), s.probePod("probe", ""))
}

// multiPortService is upstream's multiport Service: pod multi-1 has the
// named target ports svc1 (TCP) and svc1-udp on 8080, pod multi-2 svc2
// and svc2-udp on 8081; the Service "multi" maps portname1 (80) to svc1
// and portname2 (81) to svc2, over TCP and UDP; and the probe pod.
func (s *suite) multiPortService() string {
	return strings.TrimPrefix(bothProtocolsPod("multi-1", "multi", s.bothProtocolsContainer("netexec", 8080, "svc1", "svc1-udp")), "---\n") +
		bothProtocolsPod("multi-2", "multi", s.bothProtocolsContainer("netexec", 8081, "svc2", "svc2-udp")) + `---
apiVersion: v1
kind: Service
metadata: {name: multi}
spec:
  selector: {app: multi}
  ports:
  - {name: portname1, port: 80, targetPort: svc1, protocol: TCP}
  - {name: portname2, port: 81, targetPort: svc2, protocol: TCP}
  - {name: portname1-udp, port: 80, targetPort: svc1-udp, protocol: UDP}
  - {name: portname2-udp, port: 81, targetPort: svc2-udp, protocol: UDP}
` + s.probePod("probe", "")
}
