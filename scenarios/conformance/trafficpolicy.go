package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// Traffic policy Local, on two nodes with the endpoints on the first.
// internalTrafficPolicy Local: a pod reaches the ClusterIP's endpoints on
// its own node only, and on a node without one its connections are not
// answered (dropped; IPVS refuses them). externalTrafficPolicy Local: a
// client outside the cluster reaches through a node's NodePort only that
// node's endpoints, which see the client's own address and port (no SNAT:
// nothing must carry the reply back through another node); a node without
// one answers nothing; and the health check node port, which a load
// balancer asks which nodes to send to, answers 200 with the count of
// local endpoints on the first node and 503 on the other.
//
// Upstream: test/e2e/network/service.go, "[sig-network] Services should
// respect internalTrafficPolicy=Local Pod to Pod"; test/e2e/network/
// loadbalancer.go, "[sig-network] LoadBalancers ESIPP [Slow] should work
// for type=NodePort" (client address kept) and "… should only target
// nodes with endpoints" (the health check node port, 200 and 503).
func (s *suite) trafficPolicySpecs(f familyRun) {
	Describe(f.text("traffic policy Local"), Ordered, f.labels(), Label("trafficpolicy", LabelCrossNode), func() {
		var (
			nodes           []kit.Node
			local           []string // the endpoints, all on nodes[0]
			itp, etp        *corev1.Service
			onNode, offNode corev1.Pod // probe pods on nodes[0] and nodes[1]
			healthChecks    []netip.AddrPort
		)
		ws := s.workspace(f, "trafficpolicy", 2, func(ctx context.Context, ws kit.Workspace) string {
			var err error
			nodes, err = ws.Nodes(ctx)
			Expect(err).NotTo(HaveOccurred())
			return s.trafficPolicyWorkload(nodes[0].Name, nodes[1].Name)
		})
		BeforeAll(func(ctx SpecContext) {
			local = podsOf(ctx, *ws, "local", 2)
			var err error
			itp, err = (*ws).Service(ctx, "itp")
			Expect(err).NotTo(HaveOccurred())
			etp, err = (*ws).Service(ctx, "etp")
			Expect(err).NotTo(HaveOccurred())
			Expect(etp.Spec.HealthCheckNodePort).NotTo(BeZero(), "the API allocates a health check node port to a LoadBalancer Service with externalTrafficPolicy Local")
			probes, err := (*ws).Pods(ctx, "probe")
			Expect(err).NotTo(HaveOccurred())
			Expect(probes).To(HaveLen(2))
			for _, p := range probes {
				if p.Spec.NodeName == nodes[0].Name {
					onNode = p
				} else {
					offNode = p
				}
			}
			Expect([]string{onNode.Spec.NodeName, offNode.Spec.NodeName}).To(Equal([]string{nodes[0].Name, nodes[1].Name}), "one probe pod on each node")
			healthChecks = nil
			for _, n := range nodes[:2] {
				healthChecks = append(healthChecks, nodePortOf(n, etp.Spec.HealthCheckNodePort))
			}
		})
		s.evidenceOnFailure(func() evidenceSubject { // evidence_subjects.go: the Service and node the failed spec used
			if len(nodes) < 2 {
				return evidenceSubject{}
			}
			i, probe := 0, onNode
			if specMentions("without a local endpoint") {
				i, probe = 1, offNode
			}
			if specMentions("externalTrafficPolicy") {
				return nodePortEntryEvidence(*ws, etp, nodes[i])
			}
			return clusterIPEvidence(*ws, itp, podClient(probe), 80)
		})
		vip := func() netip.AddrPort { return netip.AddrPortFrom(netip.MustParseAddr(itp.Spec.ClusterIP), 80) }
		pod := func(p corev1.Pod) kit.Client { return kit.Client{Pod: p.Name, Node: p.Spec.NodeName} }
		outside := func(ctx context.Context, n kit.Node) kit.Client {
			GinkgoHelper()
			c, err := (*ws).Outside(ctx, n.Name)
			if errors.Is(err, kit.ErrNoOutsideClient) {
				Skip(fmt.Sprintf("%s: %v", s.target.Backend(), err))
			}
			Expect(err).NotTo(HaveOccurred())
			return c
		}

		It("internalTrafficPolicy Local: a pod on the endpoints' node reaches every local endpoint", func(ctx SpecContext) {
			answeredByAll(ctx, fromClient(*ws, pod(onNode), vip()), local)
		})

		It("internalTrafficPolicy Local: connections from a pod on a node without a local endpoint are not answered", func(ctx SpecContext) {
			expectNotAnswered(ctx, fromClient(*ws, pod(offNode), vip()))
		})

		It("externalTrafficPolicy Local: from outside, the endpoints' node's NodePort reaches every local endpoint, and they see the client's own address and port", func(ctx SpecContext) {
			target := nodePortOf(nodes[0], etp.Spec.Ports[0].NodePort)
			from := fromClient(*ws, outside(ctx, nodes[0]), target)
			answeredByAll(ctx, from, local)

			const n = 10
			By(fmt.Sprintf("%d connections %s asking /clientip: each endpoint sees the address and port the client connected from", n, from.what))
			res, err := from.send(ctx, kit.TrafficOptions{Connections: n, Path: "/clientip"})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Succeeded).To(Equal(n), kit.DescribeTraffic(res))
			for _, c := range res.Connections {
				Expect(c.Backend).To(Equal(c.LocalAddress), "connection %d: the endpoint saw %s, the client connected from %s: not SNATed", c.Index, c.Backend, c.LocalAddress)
			}
		})

		It("externalTrafficPolicy Local: from outside, the NodePort of a node without a local endpoint answers no connection", func(ctx SpecContext) {
			target := nodePortOf(nodes[1], etp.Spec.Ports[0].NodePort)
			expectNotAnswered(ctx, fromClient(*ws, outside(ctx, nodes[1]), target))
		})

		It("externalTrafficPolicy Local: the health check node port answers 200 with the local endpoint count on the endpoints' node, 503 on the other", func(ctx SpecContext) {
			for i, target := range healthChecks {
				from := fromClient(*ws, pod(onNode), target)
				const n = 3
				By(fmt.Sprintf("%d GET /healthz %s (node %s)", n, from.what, nodes[i].Name))
				res, err := from.send(ctx, kit.TrafficOptions{Connections: n, Path: "/healthz"})
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Attempted).To(Equal(n), kit.DescribeTraffic(res))
				for _, c := range res.Connections {
					if i == 0 {
						Expect(httpStatus(c)).To(Equal(200), "node %s has the local endpoints: %s %s", nodes[i].Name, c.Failure, c.Error)
						var body struct {
							LocalEndpoints int `json:"localEndpoints"`
						}
						Expect(json.Unmarshal([]byte(c.Backend), &body)).To(Succeed(), "the health check's JSON: %s", c.Backend)
						Expect(body.LocalEndpoints).To(Equal(len(local)), "localEndpoints on node %s: %s", nodes[i].Name, c.Backend)
					} else {
						Expect(httpStatus(c)).To(Equal(503), "node %s has no local endpoint: %q %s %s", nodes[i].Name, c.Backend, c.Failure, c.Error)
					}
				}
			}
		})
	})
}

// trafficPolicyWorkload is two netexec pods app=local on node `on`; the
// ClusterIP Service "itp" (internalTrafficPolicy Local) and the
// LoadBalancer Service "etp" (externalTrafficPolicy Local, so a node port
// and a health check node port) over them; and a probe pod on each node.
// "etp" names a load balancer class nothing implements, so no load
// balancer is made for it (none is needed: the spec uses its node ports),
// and on a cloud none is paid for.
func (s *suite) trafficPolicyWorkload(on, off string) string {
	return strings.TrimPrefix(s.serverPod(server{name: "local-0", app: "local", node: on})+s.serverPod(server{name: "local-1", app: "local", node: on}), "---\n") + `---
apiVersion: v1
kind: Service
metadata: {name: itp}
spec:
  selector: {app: local}
  internalTrafficPolicy: Local
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: etp}
spec:
  type: LoadBalancer
  loadBalancerClass: svclab.dev/none
  externalTrafficPolicy: Local
  selector: {app: local}
  ports: [{port: 80, targetPort: 8080}]
` + s.probePod("probe-0", on) + s.probePod("probe-1", off)
}
