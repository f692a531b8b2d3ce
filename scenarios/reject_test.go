package scenarios

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

var _ = Describe("a Service that selects nothing", Ordered, Label("iptables"), func() {
	var lab *netnslab.Lab

	BeforeAll(func(ctx SpecContext) {
		var err error
		lab, err = netnslab.NewLab(ctx, roottest.UniqueName("reject"), singleNode, binary)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
		Expect(lab.Apply(ctx, webService(1)+`
---
apiVersion: v1
kind: Service
metadata: {name: nothing}
spec:
  selector: {app: nobody}
  ports: [{port: 80, targetPort: 8080}]
`)).To(Succeed())
	})

	It("is rejected in the filter table, as upstream does", func() {
		vip := serviceVIP(lab, "nothing")
		lines := kit.Lines(must(lab.IPTablesSave("node1", "filter", false)))
		Expect(lines).To(ContainElement(fmt.Sprintf(
			`-A KUBE-SERVICES -d %s/32 -p tcp -m comment --comment "default/nothing has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`, vip)))
	})

	for _, from := range []string{"client", "probe"} {
		It("refuses connections from "+from, func() {
			vip := serviceVIP(lab, "nothing")
			// The REJECT answers with ICMP port unreachable, which the node's
			// kernel rate-limits per destination (net.ipv4.icmp_ratelimit,
			// a burst of 6): past that, a real client sees time-outs, so
			// only a burst's worth of connections is asserted as refused.
			const n = 5
			res, err := lab.Traffic(from, vip.String()+":80", n)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Failures).To(Equal(map[traffic.FailureKind]int{traffic.FailureRefused: n}), kit.DescribeTraffic(res))
		})
	}
})
