package conformance

import (
	"context"
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// A NodePort Service answers on every node's address whoever connects: a
// pod, a node's own host network, a client outside the cluster; and from
// each, every endpoint answers.
//
// Upstream: test/e2e/network/service.go, "[sig-network] Services should
// be able to create a functioning NodePort service [Conformance]" (from a
// pod, to the nodes' addresses), and test/e2e/network/networking.go,
// "[sig-network] Networking Granular Checks: Services should function for
// node-Service: http" (from a node's host network). Upstream reaches a
// NodePort from outside only through a cloud load balancer; here the
// outside client connects to the node's address itself (the lab's client;
// on a cluster, another node's host network).
func (s *suite) nodePortSourcesSpecs(f familyRun) {
	Describe(f.text("NodePort from a pod, a node and outside"), Ordered, f.labels(), Label("nodeport", "nodeport-sources"), func() {
		var (
			svc       *corev1.Service
			endpoints []string
			probe     corev1.Pod
			nodes     []kit.Node
		)
		ws := s.workspace(f, "npsources", 1, func(context.Context, kit.Workspace) string { return s.nodePortSourcesWorkload() })
		BeforeAll(func(ctx SpecContext) {
			var pods []corev1.Pod
			svc, pods, probe = readService(ctx, *ws, "np", "np", 2)
			endpoints = podNames(pods)
			all, err := (*ws).Nodes(ctx)
			Expect(err).NotTo(HaveOccurred())
			nodes = atMost(all, 2)
		})
		// One subject for the three sources: outside the pod network into
		// the first node's NodePort, where every source's first
		// connections go.
		s.evidenceOnFailure(func() evidenceSubject { // evidence_subjects.go
			if len(nodes) == 0 {
				return evidenceSubject{}
			}
			return nodePortEntryEvidence(*ws, svc, nodes[0])
		})
		nodePort := func() int32 { return svc.Spec.Ports[0].NodePort }

		It("answers on every node's NodePort from a pod, every endpoint answering", func(ctx SpecContext) {
			from := kit.Client{Pod: probe.Name, Node: probe.Spec.NodeName}
			for _, n := range nodes {
				answeredByAll(ctx, fromClient(*ws, from, nodePortOf(n, nodePort())), endpoints)
			}
		})

		It("answers on every node's NodePort from a node's host network, every endpoint answering", func(ctx SpecContext) {
			for _, n := range nodes {
				answeredByAll(ctx, fromNode(*ws, nodes[0].Name, nodePortOf(n, nodePort())), endpoints)
			}
		})

		It("answers on every node's NodePort from outside the cluster, every endpoint answering", func(ctx SpecContext) {
			for _, n := range nodes {
				out, err := (*ws).Outside(ctx, n.Name)
				if errors.Is(err, kit.ErrNoOutsideClient) {
					Skip(fmt.Sprintf("%s: %v", s.target.Backend(), err))
				}
				Expect(err).NotTo(HaveOccurred())
				answeredByAll(ctx, fromClient(*ws, out, nodePortOf(n, nodePort())), endpoints)
			}
		})
	})
}

// nodePortSourcesWorkload is a Deployment "np" of two netexec pods behind
// the NodePort Service "np" (port 80 → 8080), and the probe pod.
func (s *suite) nodePortSourcesWorkload() string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: np}
spec:
  replicas: 2
  selector: {matchLabels: {app: np}}
  template:
    metadata: {labels: {app: np}}
    spec:
      %s
      containers:
      - name: netexec
        image: %s
        imagePullPolicy: %s
        args: [netexec, --http-port=8080]
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /hostname, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: np}
spec:
  type: NodePort
  selector: {app: np}
  ports: [{port: 80, targetPort: 8080}]
%s`, tolerateAll, s.opts.ServerImage, s.opts.PullPolicy, s.probePod("probe", ""))
}
