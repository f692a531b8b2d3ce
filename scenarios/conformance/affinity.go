package conformance

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// ClientIP session affinity: every connection from one client goes to one
// endpoint; with a timeout, once that long passes without a connection
// from the client, its next connection picks an endpoint afresh.
//
// Upstream: test/e2e/network/service.go, "[sig-network] Services should
// have session affinity work for service with type clusterIP [LinuxOnly]
// [Conformance]" and "[sig-network] Services should have session affinity
// timeout work for service with type clusterIP [LinuxOnly]".
func (s *suite) affinitySpecs(f familyRun) {
	Describe(f.text("ClientIP session affinity"), Ordered, f.labels(), Label("affinity"), func() {
		var (
			sticky, timed *corev1.Service
			endpoints     []string
			probe         corev1.Pod
		)
		ws := s.workspace(f, "affinity", 1, func(context.Context, kit.Workspace) string { return s.affinityWorkload() })
		BeforeAll(func(ctx SpecContext) {
			var pods []corev1.Pod
			sticky, pods, probe = readService(ctx, *ws, "sticky", "aff", 3)
			endpoints = podNames(pods)
			var err error
			timed, err = (*ws).Service(ctx, "sticky-timeout")
			Expect(err).NotTo(HaveOccurred())
		})
		s.evidenceOnFailure(func() evidenceSubject { // evidence_subjects.go: the Service the failed spec used
			if specMentions("timeout") {
				return clusterIPEvidence(*ws, timed, podClient(probe), 80)
			}
			return clusterIPEvidence(*ws, sticky, podClient(probe), 80)
		})
		client := func(svc *corev1.Service) *affinityClient {
			return &affinityClient{ws: *ws, from: kit.Client{Pod: probe.Name, Node: probe.Spec.NodeName},
				vip: netip.AddrPortFrom(netip.MustParseAddr(svc.Spec.ClusterIP), 80), endpoints: endpoints}
		}

		It("sends every connection from one client to one endpoint", func(ctx SpecContext) {
			client(sticky).stuck(ctx, 30)
		})

		It("picks an endpoint afresh once the affinity timeout has passed without a connection", func(ctx SpecContext) {
			c := client(timed)
			first := c.stuck(ctx, 10)
			wait := affinityExpiry(ctx, *ws, probe.Spec.NodeName)
			// A fresh pick is each endpoint with probability 1/k: enough
			// rounds that all of them keep the first one with probability
			// below 1e-6 if the affinity does expire.
			rounds := int(math.Ceil(math.Log(1e-6) / math.Log(1/float64(len(endpoints)))))
			var picks []string
			for round := 1; round <= rounds; round++ {
				By(fmt.Sprintf("round %d of at most %d: %s without a connection (timeout %ds + margin), then a fresh pick", round, rounds, wait, affinityTimeout))
				// The wait is the behaviour under test: the proxy's affinity
				// state (iptables' recent list, nftables' set element, an IPVS
				// template) shows no expiry a client could wait on — an
				// expired recent entry stays listed until the next match
				// reaps it — so the spec waits the configured time.
				time.Sleep(wait)
				pick := c.stuck(ctx, 5)
				picks = append(picks, pick)
				if pick != first {
					By(fmt.Sprintf("picks after each timeout: %v (first %s): the affinity expired and the pick is new, and sticks again", picks, first))
					return
				}
			}
			Fail(fmt.Sprintf("%s: after each of %d waits of %s the client still went to %s (%v): the affinity did not expire after its %d s timeout",
				c.vip, rounds, wait, first, picks, affinityTimeout))
		})
	})
}

// affinityTimeout is sessionAffinityConfig.clientIP.timeoutSeconds of the
// Service sticky-timeout: short, as every round of its spec waits it out.
const affinityTimeout = 5

// affinityExpiry is how long the timeout spec leaves the client idle: the
// timeout, plus a margin for the kernel's clock (the recent match counts
// whole jiffies, nftables' timeouts are checked lazily), plus, in IPVS
// mode, IPVS's FIN timeout: an IPVS persistence template does not expire
// while a connection it placed is still in IPVS's table, and a closed
// connection stays there in FIN_WAIT/TIME_WAIT for up to 2 minutes
// (`ipvsadm --set`'s tcpfin, which kube-proxy leaves alone by default);
// upstream's timeout spec uses a timeout of 125 s for the same reason.
func affinityExpiry(ctx context.Context, ws kit.Workspace, node string) time.Duration {
	wait := affinityTimeout*time.Second + 2*time.Second
	if mode, err := ws.ProxyMode(ctx, node); err == nil && mode == "ipvs" {
		wait += 2 * time.Minute
	}
	return wait
}

// affinityClient is one pod's connections to a Service with ClientIP
// affinity.
type affinityClient struct {
	ws        kit.Workspace
	from      kit.Client
	vip       netip.AddrPort
	endpoints []string
}

// stuck makes one connection, which picks an endpoint (and records the
// client's affinity to it), then n more, and asserts that the same
// endpoint answered every one; it returns that endpoint.
func (c *affinityClient) stuck(ctx context.Context, n int) string {
	GinkgoHelper()
	first, err := c.ws.TrafficWith(ctx, c.from, c.vip, kit.TrafficOptions{Connections: 1})
	Expect(err).NotTo(HaveOccurred())
	Expect(first.Succeeded).To(Equal(1), "%s → %s: %s", c.from.Pod, c.vip, kit.DescribeTraffic(first))
	pick := first.Connections[0].Backend
	Expect(c.endpoints).To(ContainElement(pick), "the first connection is answered by an endpoint")
	By(fmt.Sprintf("pod %s → %s: the first connection went to %s; %d more must too", c.from.Pod, c.vip, pick, n))
	res, err := c.ws.TrafficWith(ctx, c.from, c.vip, kit.TrafficOptions{Connections: n})
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Succeeded).To(Equal(n), kit.DescribeTraffic(res))
	Expect(res.Backends).To(Equal(map[string]int{pick: n}),
		"every connection from %s goes where its first went (%s); without affinity all %d would with probability (1/%d)^%d", c.from.Pod, pick, n, len(c.endpoints), n)
	return pick
}

// affinityWorkload is three netexec pods app=aff behind two ClusterIP
// Services with ClientIP affinity: "sticky" (the default timeout, 3
// hours) and "sticky-timeout" (affinityTimeout seconds); and the probe pod.
func (s *suite) affinityWorkload() string {
	return fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: sticky}
spec:
  selector: {app: aff}
  sessionAffinity: ClientIP
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: sticky-timeout}
spec:
  selector: {app: aff}
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: %d}}
  ports: [{port: 80, targetPort: 8080}]
`, affinityTimeout) + s.serverPod(server{name: "aff-0", app: "aff"}) + s.serverPod(server{name: "aff-1", app: "aff"}) +
		s.serverPod(server{name: "aff-2", app: "aff"}) + s.probePod("probe", "")
}
