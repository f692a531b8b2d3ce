package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/scenarios/kit"
)

// A UDP client that sends every datagram from one source port has one
// conntrack entry on its node, and the entry keeps the DNAT to the
// backend it first went to for as long as datagrams keep coming: a new
// endpoint does not move it. When that backend goes, the entry would send
// every later datagram to an address nobody answers until it times out,
// so the proxy must delete it (kubernetes#48370; conntrack cleanup after
// endpoint changes, #139628). The spec replaces the Service's only
// backend and asserts that the client's next datagrams from the same port
// are answered by the new one; where the proxy is kube-proxy (or
// svclab's), with the node's conntrack table as evidence: the stale entry
// gone before it would have timed out, a new one DNATed to the new
// backend.
//
// Upstream (test/e2e/network/conntrack.go, "[sig-network] Conntrack"):
// "should be able to preserve UDP traffic when server pod cycles for a
// ClusterIP service" (source port 12345, backend 2 created, then backend
// 1 deleted).
func (s *suite) udpConntrackSpecs(f familyRun) {
	Describe(f.text("UDP conntrack entries cleared when endpoints change"), Ordered, f.labels(), Label("conntrack", "udp"), func() {
		var (
			svc   *corev1.Service
			probe corev1.Pod
		)
		ws := s.workspace(f, "udpconntrack", 1, func(context.Context, kit.Workspace) string { return s.udpServerService() })
		BeforeAll(func(ctx SpecContext) {
			svc, _, probe = readService(ctx, *ws, "udp", "udp-server", 1)
		})
		// The traced exchange is UDP (the Service's port 80 is), from an
		// ephemeral port: not the spec's client, a fresh one beside it.
		s.evidenceOnFailure(func() evidenceSubject { return clusterIPEvidence(*ws, svc, podClient(probe), 80) }) // evidence_subjects.go

		It("keeps answering a client sending from one source port when its only backend is replaced: the proxy clears the stale entry", func(ctx SpecContext) {
			c := &udpCycle{ws: *ws, probe: probe, vip: netip.AddrPortFrom(netip.MustParseAddr(svc.Spec.ClusterIP), 80)}
			c.answeredBy(ctx, "udp-server-1")
			if reason := s.proxy(ctx).NotKubeProxyReason(); reason != "" {
				By("conntrack not checked: " + reason)
				c.addSecondBackend(ctx, s)
				Expect(c.ws.DeletePods(ctx, "udp-server-1")).To(Succeed())
				By("the same source port again: the new backend answers")
				Eventually(c.answers).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).
					Should(Equal(map[string]int{"udp-server-2": 3}), "exchanges from port %d after the first backend was deleted", sourcePort)
				return
			}
			c.entryTo(ctx, "udp-server-1")

			c.addSecondBackend(ctx, s)
			// kube-proxy's modes translate through conntrack (IPVS through
			// its own table, as sticky), which keeps a flow's NAT while it
			// lives: only the first backend answers.
			c.answeredBy(ctx, "udp-server-1")
			stale := c.entryTo(ctx, "udp-server-1")
			seen := time.Now()

			By("the first backend deleted")
			Expect(c.ws.DeletePods(ctx, "udp-server-1")).To(Succeed())
			left := time.Duration(stale.Timeout)*time.Second - time.Since(seen)
			Expect(left).To(BeNumerically(">", time.Second),
				"precondition: the entry %v (%d s to live when read) would still live had nobody cleared it; the replacement took %s", stale, stale.Timeout, time.Since(seen).Round(time.Millisecond))
			Eventually(c.entries).WithArguments(stale.Reply.Src).WithContext(ctx).
				WithTimeout(left).WithPolling(200*time.Millisecond).Should(BeEmpty(),
				"the proxy deletes the entry of %s → %s DNATed to the deleted backend %s, %s before it would time out", c.client, c.vip, stale.Reply.Src, left.Round(time.Second))

			By("the same source port again: the new backend answers")
			c.answeredBy(ctx, "udp-server-2")
			c.entryTo(ctx, "udp-server-2")
		})
	})
}

// sourcePort is the client's one source port (upstream's srcPort).
const sourcePort = 12345

// udpCycle is the client of the UDP conntrack spec: the probe pod sending
// from sourcePort to the Service's vip.
type udpCycle struct {
	ws     kit.Workspace
	probe  corev1.Pod
	vip    netip.AddrPort
	client netip.AddrPort // the probe's ip:sourcePort, once it has sent
}

// exchange makes three exchanges from the source port and asserts each
// was answered.
func (c *udpCycle) exchange(ctx context.Context) *traffic.Result {
	GinkgoHelper()
	const n = 3
	res, err := c.ws.TrafficWith(ctx, kit.Client{Pod: c.probe.Name, Node: c.probe.Spec.NodeName}, c.vip,
		kit.TrafficOptions{Connections: n, Protocol: traffic.ProtocolUDP, SourcePort: sourcePort})
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Succeeded).To(Equal(n), "every UDP exchange from port %d to %s answers: %s", sourcePort, c.vip, kit.DescribeTraffic(res))
	for _, conn := range res.Connections {
		from := netip.MustParseAddrPort(conn.LocalAddress)
		Expect(from.Port()).To(Equal(uint16(sourcePort)), "exchange %d came from %s, not port %d", conn.Index, from, sourcePort)
		c.client = from
	}
	return res
}

// addSecondBackend applies the pod udp-server-2.
func (c *udpCycle) addSecondBackend(ctx context.Context, s *suite) {
	GinkgoHelper()
	By("a second backend, udp-server-2")
	Expect(c.ws.Apply(ctx, strings.TrimPrefix(s.udpServerPod("udp-server-2"), "---\n"))).To(Succeed())
}

// answers makes three exchanges from the source port and returns how many
// each backend answered, or why one failed.
func (c *udpCycle) answers(ctx context.Context) (map[string]int, error) {
	res, err := c.ws.TrafficWith(ctx, kit.Client{Pod: c.probe.Name, Node: c.probe.Spec.NodeName}, c.vip,
		kit.TrafficOptions{Connections: 3, Protocol: traffic.ProtocolUDP, SourcePort: sourcePort})
	if err != nil {
		return nil, err
	}
	if res.Failed() > 0 {
		return res.Backends, errors.New(kit.DescribeTraffic(res))
	}
	return res.Backends, nil
}

// answeredBy makes the exchanges and asserts that pod answered each.
func (c *udpCycle) answeredBy(ctx context.Context, pod string) {
	GinkgoHelper()
	By(fmt.Sprintf("UDP exchanges from %s port %d to %s: %s answers", c.probe.Name, sourcePort, c.vip, pod))
	res := c.exchange(ctx)
	Expect(res.Backends).To(Equal(map[string]int{pod: res.Succeeded}), "every exchange answered by %s", pod)
}

// entryTo asserts that the client's flow is one conntrack entry on the
// probe's node, DNATed to pod's 8080, and returns it.
func (c *udpCycle) entryTo(ctx context.Context, pod string) conntrack.Flow {
	GinkgoHelper()
	pods, err := c.ws.Pods(ctx, "udp-server")
	Expect(err).NotTo(HaveOccurred())
	i := slices.IndexFunc(pods, func(p corev1.Pod) bool { return p.Name == pod })
	Expect(i).To(BeNumerically(">=", 0), "pod %s runs", pod)
	want := netip.AddrPortFrom(netip.MustParseAddr(pods[i].Status.PodIP), 8080)
	flows := trackedFlows(ctx, protocolView{c.ws, protoUDP}, c.probe.Spec.NodeName, c.vip, map[netip.AddrPort]bool{c.client: true})
	Expect(flows).To(HaveLen(1), "one UDP conntrack entry %s → %s on %s", c.client, c.vip, c.probe.Spec.NodeName)
	f := flows[0]
	Expect(f.Reply.Src).To(Equal(want), "conntrack %v: DNAT to %s (%s)", f, pod, want)
	Expect(f.DstNAT()).To(BeTrue(), "conntrack %v: DNAT status bit", f)
	By(fmt.Sprintf("conntrack on %s: %v", c.probe.Spec.NodeName, f))
	return f
}

// entries are the client's UDP entries to the vip on the probe's node
// whose reply comes from backend.
func (c *udpCycle) entries(ctx context.Context, backend netip.AddrPort) ([]conntrack.Flow, error) {
	flows, err := c.ws.Conntrack(ctx, c.probe.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	var out []conntrack.Flow
	for _, f := range flows {
		if f.Proto == protoUDP && f.Orig.Src == c.client && f.Orig.Dst == c.vip && f.Reply.Src == backend {
			out = append(out, f)
		}
	}
	return out, nil
}

// udpServerService is a ClusterIP Service "udp" (port 80/UDP → 8080) over
// the pods labelled app=udp-server, its first backend udp-server-1, and
// the probe pod.
func (s *suite) udpServerService() string {
	return `
apiVersion: v1
kind: Service
metadata: {name: udp}
spec:
  selector: {app: udp-server}
  ports:
  - {name: udp, port: 80, targetPort: 8080, protocol: UDP}
` + s.udpServerPod("udp-server-1") + s.probePod("probe", "")
}

// udpServerPod is a backend of the Service "udp" (a "---" document): a
// pod serving UDP (and HTTP, for its readiness probe) on 8080.
func (s *suite) udpServerPod(name string) string {
	return bothProtocolsPod(name, "udp-server", s.bothProtocolsContainer("netexec", 8080, "", ""))
}
