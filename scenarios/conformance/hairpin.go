package conformance

import (
	"context"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// A pod that connects to its own Service's ClusterIP, and is the Service's
// only endpoint, reaches itself: the proxy sends the connection back into
// the pod it came from (the hairpin), and the reply finds its way back
// through the same translation.
//
// Upstream: test/e2e/network/service.go, "[sig-network] Services should
// allow pods to hairpin back to themselves through services".
func (s *suite) hairpinSpecs(f familyRun) {
	Describe(f.text("hairpin: a pod through its own Service"), Ordered, f.labels(), Label("hairpin"), func() {
		const podName = "hairpin-0"
		var svc *corev1.Service
		ws := s.workspace(f, "hairpin", 1, func(context.Context, kit.Workspace) string {
			return `
apiVersion: v1
kind: Service
metadata: {name: hairpin}
spec:
  selector: {app: hairpin}
  ports: [{port: 80, targetPort: 8080}]
` + s.serverPod(server{name: podName, app: "hairpin"})
		})
		var self kit.Client
		BeforeAll(func(ctx SpecContext) {
			var err error
			svc, err = (*ws).Service(ctx, "hairpin")
			Expect(err).NotTo(HaveOccurred())
			pods, err := (*ws).Pods(ctx, "hairpin")
			Expect(err).NotTo(HaveOccurred())
			Expect(podNames(pods)).To(Equal([]string{podName}))
			self = kit.Client{Pod: podName, Node: pods[0].Spec.NodeName}
		})
		s.evidenceOnFailure(func() evidenceSubject { return clusterIPEvidence(*ws, svc, self, 80) }) // evidence_subjects.go

		It("answers the pod's own connections to its Service, from itself", func(ctx SpecContext) {
			vip := netip.AddrPortFrom(netip.MustParseAddr(svc.Spec.ClusterIP), 80)
			answeredByAll(ctx, fromClient(*ws, self, vip), []string{podName})
		})
	})
}
