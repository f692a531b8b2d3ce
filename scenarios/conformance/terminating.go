package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// A Service whose only endpoint is a pod being deleted that still serves
// (its server goes on answering after SIGTERM: netexec --delay-shutdown,
// as a preStop sleep would keep it) falls back to that terminating
// endpoint rather than to nothing: through the ClusterIP from a pod, and
// through the NodePort of its node with externalTrafficPolicy Local from
// outside.
//
// Upstream: test/e2e/network/service.go, "[sig-network] Services should
// fallback to terminating endpoints when there are no ready endpoints with
// internalTrafficPolicy=Cluster" and "[sig-network] Services should
// fallback to local terminating endpoints when there are no ready
// endpoints with externalTrafficPolicy=Local".
func (s *suite) terminatingSpecs(f familyRun) {
	Describe(f.text("the terminating-endpoint fallback"), Ordered, f.labels(), Label("terminating"), func() {
		var (
			cluster, local *corev1.Service
			node           kit.Node
		)
		const serverName = "term-0"
		ws := s.workspace(f, "terminating", 1, func(ctx context.Context, ws kit.Workspace) string {
			nodes, err := ws.Nodes(ctx)
			Expect(err).NotTo(HaveOccurred())
			node = nodes[0]
			return s.terminatingWorkload(serverName, node.Name)
		})
		var probe kit.Client
		BeforeAll(func(ctx SpecContext) {
			var p corev1.Pod
			cluster, _, p = readService(ctx, *ws, "term", "term", 1)
			probe = kit.Client{Pod: p.Name, Node: p.Spec.NodeName}
			var err error
			local, err = (*ws).Service(ctx, "term-local")
			Expect(err).NotTo(HaveOccurred())

			By(fmt.Sprintf("pod %s deleted: terminating for its %d s grace period, serving all along", serverName, terminatingGrace))
			Expect((*ws).TerminatePods(ctx, serverName)).To(Succeed())
			pods, err := (*ws).Pods(ctx, "term")
			Expect(err).NotTo(HaveOccurred())
			Expect(pods).To(HaveLen(1))
			Expect(pods[0].DeletionTimestamp).NotTo(BeNil(), "pod %s is terminating", serverName)
			// Then gone, before the workspace is: a second delete with a
			// grace period of 1 s shortens the first one.
			DeferCleanup(func(ctx SpecContext) { Expect((*ws).DeletePods(ctx, serverName)).To(Succeed()) })
		})
		s.evidenceOnFailure(func() evidenceSubject { // evidence_subjects.go: the Service the failed spec used
			if specMentions("NodePort") {
				return nodePortEntryEvidence(*ws, local, node)
			}
			return clusterIPEvidence(*ws, cluster, probe, 80)
		})

		It("sends connections to the ClusterIP to the only endpoint, terminating but serving", func(ctx SpecContext) {
			vip := netip.AddrPortFrom(netip.MustParseAddr(cluster.Spec.ClusterIP), 80)
			answeredByAll(ctx, fromClient(*ws, probe, vip), []string{serverName})
		})

		It("sends connections from outside to its node's NodePort with externalTrafficPolicy Local to the local endpoint, terminating but serving", func(ctx SpecContext) {
			out, err := (*ws).Outside(ctx, node.Name)
			if errors.Is(err, kit.ErrNoOutsideClient) {
				Skip(fmt.Sprintf("%s: %v", s.target.Backend(), err))
			}
			Expect(err).NotTo(HaveOccurred())
			answeredByAll(ctx, fromClient(*ws, out, nodePortOf(node, local.Spec.Ports[0].NodePort)), []string{serverName})
		})
	})
}

// terminatingGrace is the server's grace period and --delay-shutdown:
// long enough for the specs to run while it terminates; its cleanup
// shortens it.
const terminatingGrace = 300

// terminatingWorkload is one netexec pod app=term on node that goes on
// serving for terminatingGrace seconds after SIGTERM; the ClusterIP
// Service "term" and the NodePort Service "term-local"
// (externalTrafficPolicy Local) over it; and the probe pod.
func (s *suite) terminatingWorkload(name, node string) string {
	return `
apiVersion: v1
kind: Service
metadata: {name: term}
spec:
  selector: {app: term}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: term-local}
spec:
  type: NodePort
  externalTrafficPolicy: Local
  selector: {app: term}
  ports: [{port: 80, targetPort: 8080}]
` + s.serverPod(server{name: name, app: "term", node: node, delayShutdown: terminatingGrace}) + s.probePod("probe", "")
}
