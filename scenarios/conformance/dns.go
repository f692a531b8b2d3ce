package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/agents/dnslookup"
	"github.com/svclab/svclab/scenarios/kit"
)

// Services through cluster DNS, asked from a pod with the pod's own
// resolver (its resolv.conf: the cluster DNS Service, the namespace's
// search list): a Service's name is an A record of its ClusterIP, a
// headless Service's name the A records of its ready endpoints, and an
// ExternalName Service's name a CNAME of its externalName.
//
// Upstream: test/e2e/network/dns.go, "[sig-network] DNS should provide
// DNS for services [Conformance]" (a Service's and a headless Service's
// A records) and "[sig-network] DNS should provide DNS for ExternalName
// services [Conformance]" (the CNAME).
func (s *suite) dnsSpecs(f familyRun) {
	Describe(f.text("Services through cluster DNS"), Ordered, f.labels(), Label("dns"), func() {
		var (
			web, headless, external *corev1.Service
			pods                    []corev1.Pod
			probe                   corev1.Pod
		)
		ws := s.workspace(f, "dns", 1, func(context.Context, kit.Workspace) string { return s.dnsWorkload() })
		BeforeAll(func(ctx SpecContext) {
			web, pods, probe = readService(ctx, *ws, "web", "dns", 2)
			var err error
			headless, err = (*ws).Service(ctx, "web-headless")
			Expect(err).NotTo(HaveOccurred())
			external, err = (*ws).Service(ctx, "ext")
			Expect(err).NotTo(HaveOccurred())
		})
		// The lookups go to the cluster DNS Service, which is not the
		// workspace's; the subject is the Service the failed spec asks
		// about, by name where it has no cluster IP (headless,
		// ExternalName: no rules, no traced connection, which is itself
		// what a proxy must do with them).
		s.evidenceOnFailure(func() evidenceSubject { // evidence_subjects.go
			switch {
			case specMentions("headless"):
				return clusterIPEvidence(*ws, headless, podClient(probe), 80)
			case specMentions("ExternalName"):
				return clusterIPEvidence(*ws, external, podClient(probe), 80)
			}
			return clusterIPEvidence(*ws, web, podClient(probe), 80)
		})
		// expectAnswer asks until the answer is want: cluster DNS follows
		// the API through a watch, and may lag behind the EndpointSlices
		// the workspace waited for by a moment.
		expectAnswer := func(ctx context.Context, name, qtype string, want []string) {
			GinkgoHelper()
			var last dnslookup.Answer
			Eventually(func(g Gomega) {
				a, err := (*ws).Lookup(ctx, probe.Name, name, qtype)
				g.Expect(err).NotTo(HaveOccurred(), "%s %s from pod %s", qtype, name, probe.Name)
				last = a
				// The pod's search list puts its own namespace first.
				g.Expect(a.Name).To(HavePrefix(name+"."+web.Namespace+".svc."), "the name that answered")
				g.Expect(slices.Sorted(slices.Values(a.Values()))).To(Equal(slices.Sorted(slices.Values(want))), "%s records of %s", qtype, a.Name)
			}).WithContext(ctx).WithTimeout(dnsLag).WithPolling(time.Second).Should(Succeed())
			By(fmt.Sprintf("pod %s: %s %s → %s %v", probe.Name, qtype, name, last.Name, last.Values()))
		}

		// The address records of the run's family: A, or AAAA for IPv6.
		rr := addressRecord(f.family)
		It("answers a Service's name with an "+rr+" record of its ClusterIP", func(ctx SpecContext) {
			expectAnswer(ctx, web.Name, rr, []string{web.Spec.ClusterIP})
		})

		It("answers a headless Service's name with the "+rr+" records of its ready endpoints", func(ctx SpecContext) {
			Expect(headless.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
			var want []string
			for _, p := range pods {
				want = append(want, p.Status.PodIP)
			}
			expectAnswer(ctx, headless.Name, rr, want)
		})

		It("answers an ExternalName Service's name with a CNAME of its externalName", func(ctx SpecContext) {
			expectAnswer(ctx, external.Name, "CNAME", []string{strings.TrimSuffix(external.Spec.ExternalName, ".") + "."})
		})
	})
}

// addressRecord is the DNS record type of a family's addresses: A, or
// AAAA for IPv6.
func addressRecord(family corev1.IPFamily) string {
	if kit.IsIPv6(family) {
		return "AAAA"
	}
	return "A"
}

// dnsLag bounds how long cluster DNS may take to answer what the API
// already says: a watch event's way to the server, well under a second on
// an idle cluster.
const dnsLag = 30 * time.Second

// dnsWorkload is two netexec pods app=dns, the ClusterIP Service "web" and
// the headless Service "web-headless" over them, the ExternalName Service
// "ext" (to a name under example.com, which nothing resolves: the answer
// is the CNAME itself), and the probe pod.
func (s *suite) dnsWorkload() string {
	return `
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: dns}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web-headless}
spec:
  clusterIP: None
  selector: {app: dns}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: ext}
spec:
  type: ExternalName
  externalName: svclab-conformance.example.com
` + s.serverPod(server{name: "dns-0", app: "dns"}) + s.serverPod(server{name: "dns-1", app: "dns"}) + s.probePod("probe", "")
}
