package conformance

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// dualStackSpecs: on a cluster of both families, one PreferDualStack
// Service gets a cluster IP of each, in the cluster's order, and both
// lead to the same pods — upstream's dual_stack.go, "should create
// service with ipv4,v6 cluster ip" and "should be able to reach pod on
// ipv4 and ipv6 ip", through the Service. Declared only when the run has
// both families; primary is the run of the primary family.
func (s *suite) dualStackSpecs(primary familyRun) {
	Describe("dual-stack Service", Ordered, Label(LabelDualStack), func() {
		var (
			svc   *corev1.Service
			pods  []corev1.Pod
			probe corev1.Pod
		)
		// The workspace's own family is the primary one: the Service's
		// policy is its own (the manifest sets it), so it is left as it is.
		ws := s.workspace(primary, "dualstack", 1, func(context.Context, kit.Workspace) string { return s.dualStackService() })
		BeforeAll(func(ctx SpecContext) {
			var err error
			svc, err = (*ws).Service(ctx, "web")
			Expect(err).NotTo(HaveOccurred())
			pods, err = (*ws).Pods(ctx, "web")
			Expect(err).NotTo(HaveOccurred())
			Expect(pods).To(HaveLen(2))
			probes, err := (*ws).Pods(ctx, "probe")
			Expect(err).NotTo(HaveOccurred())
			Expect(probes).To(HaveLen(1))
			probe = probes[0]
		})

		It("gives a PreferDualStack Service one cluster IP per family, the cluster's primary family first", func(ctx SpecContext) {
			expectOneClusterIPPerFamily(svc, s.opts.Families)
		})

		It("answers on each of the Service's cluster IPs from the same pods", func(ctx SpecContext) {
			const n = 40
			for _, ip := range svc.Spec.ClusterIPs {
				target := netip.AddrPortFrom(netip.MustParseAddr(ip), 80)
				By(fmt.Sprintf("%d connections from pod %s to %s", n, probe.Name, target))
				res, err := (*ws).Traffic(ctx, kit.Client{Pod: probe.Name, Node: probe.Spec.NodeName}, target, n)
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Succeeded).To(Equal(n), "every connection to %s answers: %s", target, kit.DescribeTraffic(res))
				Expect(keys(res.Backends)).To(ConsistOf(podNames(pods)), "the Service's pods answer on %s, all of them", target)
			}
		})
	})
}

// expectOneClusterIPPerFamily: spec.ipFamilies are families, in order,
// and spec.clusterIPs one address of each, in the same order.
func expectOneClusterIPPerFamily(svc *corev1.Service, families []corev1.IPFamily) {
	GinkgoHelper()
	Expect(svc.Spec.IPFamilyPolicy).NotTo(BeNil())
	Expect(*svc.Spec.IPFamilyPolicy).To(Equal(corev1.IPFamilyPolicyPreferDualStack))
	Expect(svc.Spec.IPFamilies).To(Equal(families), "spec.ipFamilies: the cluster's families, primary first")
	Expect(svc.Spec.ClusterIPs).To(HaveLen(len(families)), "one cluster IP per family: %v", svc.Spec.ClusterIPs)
	for i, ip := range svc.Spec.ClusterIPs {
		a, err := netip.ParseAddr(ip)
		Expect(err).NotTo(HaveOccurred())
		Expect(kit.FamilyOf(a)).To(Equal(families[i]), "cluster IP %s is of family %s", ip, families[i])
	}
	Expect(svc.Spec.ClusterIP).To(Equal(svc.Spec.ClusterIPs[0]), "spec.clusterIP is the primary family's")
}

// dualStackService is webService(2) with a PreferDualStack Service.
func (s *suite) dualStackService() string {
	return s.webServiceWithPolicy(2, "  ipFamilyPolicy: PreferDualStack\n")
}

// keys are a map's keys, sorted.
func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
