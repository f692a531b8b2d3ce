package conformance

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/scenarios/kit"
)

// A Service whose selector matches no pod refuses at once: a TCP connect
// is answered by an ICMP error (kube-proxy's REJECT, port unreachable) and
// fails with "connection refused" (or "no route to host" where the proxy
// rejects with host unreachable), a UDP datagram likewise; neither waits
// for the client's timeout, as a DROP would make it. Where the proxy is
// kube-proxy (or svclab's) in iptables mode, the REJECT rule's counter
// accounts for every attempt.
//
// Upstream (test/e2e/network/service.go, "[sig-network] Services"):
// "should be rejected when no endpoints exist" (TCP; UDP here too).
func (s *suite) noEndpointsSpecs(f familyRun) {
	Describe(f.text("a Service without endpoints"), Ordered, f.labels(), Label("noendpoints", "udp"), func() {
		var (
			svc   *corev1.Service
			probe corev1.Pod
		)
		ws := s.workspace(f, "noendpoints", 1, func(context.Context, kit.Workspace) string { return s.noEndpointsService() })
		BeforeAll(func(ctx SpecContext) {
			svc, _, probe = readService(ctx, *ws, "no-pods", "nopods", 0)
		})
		s.evidenceOnFailure(func() evidenceSubject { return clusterIPEvidence(*ws, svc, podClient(probe), 80) }) // evidence_subjects.go

		for _, protocol := range []string{traffic.ProtocolTCP, traffic.ProtocolUDP} {
			It(fmt.Sprintf("refuses %s at once: an ICMP error (REJECT), not the client's timeout", strings.ToUpper(protocol)), func(ctx SpecContext) {
				expectRejected(ctx, *ws, kit.Client{Pod: probe.Name, Node: probe.Spec.NodeName}, svc, protocol, s.proxy(ctx))
			})
		}
	})
}

// expectRejected sends a few connections (or UDP exchanges) to the
// Service's port 80 over protocol and asserts each was refused well
// before the client's timeout; where p writes kube-proxy's rules in
// iptables mode, also that the Service port's "has no endpoints" REJECT
// rule counted each.
func expectRejected(ctx context.Context, ws kit.Workspace, from kit.Client, svc *corev1.Service, protocol string, p kit.Proxy) {
	GinkgoHelper()
	// Two attempts per protocol: the kernel rate-limits the ICMP errors
	// it sends one address (net.ipv4.icmp_ratelimit: a burst of 6, then
	// one a second), so a seventh attempt within a second would time out
	// for the kernel's reason, not the proxy's (measured: TCP 5, then UDP
	// 1 refused and 4 timed out).
	const n = 2
	target := netip.AddrPortFrom(netip.MustParseAddr(svc.Spec.ClusterIP), 80)
	counted := p.NotKubeProxyReason() == "" && proxyMode(ctx, ws, from.Node) == "iptables"
	reject := func() int64 { return 0 }
	if counted {
		reject = rejectCounter(ctx, ws, from.Node, svc.Namespace+"/"+svc.Name+":"+protocol+" has no endpoints")
	}
	before := reject()

	By(fmt.Sprintf("%d %s attempts from %s to %s, timeout %s each", n, protocol, from.Pod, target, kit.ConnectionTimeout()))
	res, err := ws.TrafficWith(ctx, from, target, kit.TrafficOptions{Connections: n, Protocol: protocol})
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Attempted).To(Equal(n), kit.DescribeTraffic(res))
	var slowest time.Duration
	for _, c := range res.Connections {
		Expect(c.Failure).To(BeElementOf(traffic.FailureRefused, traffic.FailureUnreachable),
			"%s attempt %d: %s (%s after %s); want connection refused or no route to host, the ICMP error of a REJECT", protocol, c.Index, c.Failure, c.Error, c.Duration)
		Expect(c.Duration).To(BeNumerically("<", kit.TrafficTimeout/4), "%s attempt %d refused only after %s", protocol, c.Index, c.Duration)
		slowest = max(slowest, c.Duration)
	}
	By(fmt.Sprintf("every attempt refused (%v), the slowest after %s", res.Failures, slowest))

	// The counter counts packets: every attempt's first packet, and a
	// TCP SYN the client sent again because the kernel held back the
	// ICMP error of the first (its rate limit; measured on a kind
	// cluster: 3 for 2 attempts, the slowest refused after 1.03 s, the
	// SYN retransmission timeout). An attempt refused within
	// TrafficTimeout/4 (2.5 s) was sent at most twice (SYNs at 0 s and
	// 1 s; the next would be at 3 s).
	if counted {
		Expect(reject()-before).To(SatisfyAll(BeNumerically(">=", n), BeNumerically("<=", 2*n)),
			"the REJECT rule of %s counts each of the %d attempts (and at most one retransmitted SYN each)", target, n)
	}
}

// proxyMode is what the proxy on node answers on /proxyMode (ask only a
// proxy that writes kube-proxy's rules).
func proxyMode(ctx context.Context, ws kit.Workspace, node string) string {
	GinkgoHelper()
	mode, err := ws.ProxyMode(ctx, node)
	Expect(err).NotTo(HaveOccurred())
	return mode
}

// rejectCounter reads, on a node, the packet counter of the filter
// table's KUBE-SERVICES rule whose comment is comment and whose target
// is REJECT (there must be exactly one).
func rejectCounter(ctx context.Context, ws kit.Workspace, node, comment string) func() int64 {
	return func() int64 {
		GinkgoHelper()
		save, err := ws.IPTablesSave(ctx, node, "filter", true)
		Expect(err).NotTo(HaveOccurred())
		var found []kit.Rule
		for _, r := range kit.Rules(save, "KUBE-SERVICES") {
			if strings.Contains(r.Spec, `"`+comment+`"`) && jumpTarget(r.Spec) == "REJECT" {
				found = append(found, r)
			}
		}
		Expect(found).To(HaveLen(1), "one REJECT rule %q in the filter table's KUBE-SERVICES on %s", comment, node)
		return found[0].Packets
	}
}

// noEndpointsService is a Service "no-pods" whose selector matches no
// pod, port 80 over TCP and over UDP, and the probe pod.
func (s *suite) noEndpointsService() string {
	return `
apiVersion: v1
kind: Service
metadata: {name: no-pods}
spec:
  selector: {app: nopods}
  ports:
  - {name: tcp, port: 80, targetPort: 8080, protocol: TCP}
  - {name: udp, port: 80, targetPort: 8080, protocol: UDP}
` + s.probePod("probe", "")
}
