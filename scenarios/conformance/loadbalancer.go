package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// A LoadBalancer Service, where the cluster gives it an address
// (status.loadBalancer.ingress): connections to that address and the
// Service's port are answered by every endpoint, from a pod and from
// outside the cluster. Where nothing assigns addresses the spec skips,
// saying so.
//
// Upstream: test/e2e/network/loadbalancer.go, "[sig-network] LoadBalancers
// should be able to change the type and ports of a TCP service [Slow]"
// (its "hitting the TCP service's LoadBalancer" steps; upstream needs a
// cloud provider, this runs wherever addresses are assigned: svclab's kind
// load balancer, MetalLB, a lab's pool).
func (s *suite) loadBalancerSpecs(f familyRun) {
	Describe(f.text("LoadBalancer where the cluster assigns addresses"), Ordered, f.labels(), Label("loadbalancer"), func() {
		var (
			svc       *corev1.Service
			endpoints []string
			probe     corev1.Pod
			ingress   netip.AddrPort
		)
		ws := s.workspace(f, "loadbalancer", 1, func(context.Context, kit.Workspace) string { return s.loadBalancerWorkload() })
		BeforeAll(func(ctx SpecContext) {
			var pods []corev1.Pod
			svc, pods, probe = readService(ctx, *ws, "lb", "lb", 2)
			endpoints = podNames(pods)
			addr, err := (*ws).LoadBalancerAddress(ctx, svc.Name, loadBalancerWait)
			if errors.Is(err, kit.ErrNoLoadBalancerAddress) {
				Skip(fmt.Sprintf("%s: %v", s.target.Backend(), err))
			}
			Expect(err).NotTo(HaveOccurred())
			if f.tagged {
				// A proxy programs a load balancer address in the Service's
				// family only (upstream's proxier of the other family
				// skips it: an address of the wrong family is no ingress).
				Expect(kit.FamilyOf(addr)).To(Equal(f.family), "the %s Service's load balancer address %s is of its family", f.family, addr)
			}
			ingress = netip.AddrPortFrom(addr, uint16(svc.Spec.Ports[0].Port))
			By(fmt.Sprintf("Service %s: load balancer address %s", svc.Name, addr))
			// Read again, with the address in its status: the evidence
			// looks for rules and conntrack entries at it.
			svc, err = (*ws).Service(ctx, svc.Name)
			Expect(err).NotTo(HaveOccurred())
		})
		s.evidenceOnFailure(func() evidenceSubject { // evidence_subjects.go: from the probe pod to the load balancer address
			subject := clusterIPEvidence(*ws, svc, podClient(probe), 80)
			if ingress.IsValid() {
				subject.to = ingress
			}
			return subject
		})

		It("answers on its load balancer address from a pod, every endpoint answering", func(ctx SpecContext) {
			answeredByAll(ctx, fromClient(*ws, kit.Client{Pod: probe.Name, Node: probe.Spec.NodeName}, ingress), endpoints)
		})

		It("answers on its load balancer address from outside the cluster, every endpoint answering", func(ctx SpecContext) {
			nodes, err := (*ws).Nodes(ctx)
			Expect(err).NotTo(HaveOccurred())
			out, err := (*ws).Outside(ctx, nodes[0].Name)
			if errors.Is(err, kit.ErrNoOutsideClient) {
				Skip(fmt.Sprintf("%s: %v", s.target.Backend(), err))
			}
			Expect(err).NotTo(HaveOccurred())
			answeredByAll(ctx, fromClient(*ws, out, ingress), endpoints)
		})
	})
}

// loadBalancerWait bounds the wait for a load balancer address. The
// controllers that hand out addresses from a pool (svclab's kind load
// balancer, MetalLB, kube-vip) assign one on the Service's creation event,
// within a second or two even on a loaded cluster; a cluster where none
// came in this time has nothing that assigns them, or a cloud load
// balancer whose provisioning (minutes) this suite does not wait for.
const loadBalancerWait = 30 * time.Second

// loadBalancerWorkload is two netexec pods app=lb behind the LoadBalancer
// Service "lb" (port 80 → 8080), and the probe pod.
func (s *suite) loadBalancerWorkload() string {
	return `
apiVersion: v1
kind: Service
metadata: {name: lb}
spec:
  type: LoadBalancer
  selector: {app: lb}
  ports: [{port: 80, targetPort: 8080}]
` + s.serverPod(server{name: "lb-0", app: "lb"}) + s.serverPod(server{name: "lb-1", app: "lb"}) + s.probePod("probe", "")
}
