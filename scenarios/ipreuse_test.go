package scenarios

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

// Pod IP reuse, the way a Deployment reuses addresses when it is scaled
// down and up again: the new pods get the lowest free addresses of their
// nodes' podCIDRs, which the deleted pods had, behind new MACs. The nodes
// have just talked to the old pods, so their neighbour caches hold the old
// MACs; the CNI must make the new ones known when it sets the address
// (gratuitous ARP on the bridge, the permanent neighbour entry on cali*
// interfaces), or connections time out until the entries expire.
//
// Expectations (exact counts, no statistics):
//   - 3 → 1 → 3 replicas, the two new pods on reused IPs: 100 of 100
//     connections from the client, and 100 of 100 from the pod "probe", to
//     the Service succeed right after apply returns (before the fix, on
//     flannel-vxlan 66 of 100 timed out for 25–28 s).
//   - churn: churnRescales random re-scales between 1 and 4 replicas, each
//     different from the last, traffic from the client and from the probe
//     pod after every apply: no failed connection, and at least one IP
//     reused.
//
// The probe pod's traffic also watches cni0's MAC: a bridge whose MAC
// followed its ports would change it when the port it had was removed,
// and the pods' entries for their gateway would point nowhere.
var _ = Describe("pod IP reuse", Label("iptables", "cni", "churn", "multi-node"), func() {
	const (
		n             = 100 // connections right after the 3 → 1 → 3 apply
		churnRescales = 10
		churnConns    = 40 // connections after every churn apply
	)
	for _, cni := range []string{"flannel-vxlan", "calico-proxyarp", "canal"} {
		Context("on "+cni, Ordered, func() {
			var (
				lab    *netnslab.Lab
				target string
			)

			// scale applies the Deployment at replicas and returns its pods'
			// IPs by pod name.
			scale := func(ctx SpecContext, replicas int) map[string]netip.Addr {
				GinkgoHelper()
				Expect(lab.Apply(ctx, webService(replicas))).To(Succeed())
				ips := podIPs(lab, "web")
				Expect(ips).To(HaveLen(replicas))
				return ips
			}
			// connect makes count connections from a host or pod to the
			// Service. Each has 10 s: a bound for a loaded host that still
			// fails the 25–28 s a stale neighbour entry costs.
			connect := func(from string, count int) *traffic.Result {
				GinkgoHelper()
				res, err := lab.Lab.Traffic(from, traffic.Options{Target: target, Connections: count, Timeout: 10 * time.Second}, labOpts())
				Expect(err).NotTo(HaveOccurred())
				return res
			}

			BeforeAll(func(ctx SpecContext) {
				var err error
				lab, err = netnslab.NewLab(ctx, roottest.UniqueName("reuse"), strings.ReplaceAll(nodePortLab, "{{CNI}}", cni), binary)
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
				scale(ctx, 3)
				target = netip.AddrPortFrom(serviceVIP(lab, "web"), 80).String()
			})

			It("reaches the pods of a Deployment scaled 3 → 1 → 3 on reused IPs right after apply returns", func(ctx SpecContext) {
				By("every pod answers, so both nodes hold neighbour entries for all three")
				before := scale(ctx, 3)
				for _, from := range []string{"client", "probe"} {
					res := connect(from, n)
					Expect(res.Succeeded).To(Equal(n), "from %s: %s", from, kit.DescribeTraffic(res))
					Expect(res.Backends).To(HaveLen(3), "from %s: %s", from, kit.DescribeTraffic(res))
				}

				scale(ctx, 1)
				after := scale(ctx, 3)
				reused := reusedIPs(before, after)
				Expect(reused).To(HaveLen(2), "the two new pods take the deleted pods' addresses: before %v, after %v", before, after)

				for _, from := range []string{"client", "probe"} {
					res := connect(from, n)
					GinkgoWriter.Printf("%s: 3 → 1 → 3, reused %v, from %s: %s\n", cni, reused, from, kit.DescribeTraffic(res))
					Expect(res.Succeeded).To(Equal(n), "from %s right after apply, reused %v: %s", from, reused, kit.DescribeTraffic(res))
					Expect(res.Backends).To(HaveLen(3), "from %s: %s", from, kit.DescribeTraffic(res))
				}
			})

			It(fmt.Sprintf("loses no connection over %d random re-scales with traffic after every apply", churnRescales), func(ctx SpecContext) {
				rng := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), 10))
				owner := map[netip.Addr]string{} // every IP a pod had, and its last pod
				for name, ip := range podIPs(lab, "web") {
					owner[ip] = name
				}
				replicas := len(owner)
				var attempted, failed, reuses int
				for i := range churnRescales {
					next := replicas
					for next == replicas {
						next = 1 + rng.IntN(4)
					}
					replicas = next
					ips := scale(ctx, replicas)
					reused := 0
					for name, ip := range ips {
						if prev, ok := owner[ip]; ok && prev != name {
							reused++
						}
						owner[ip] = name
					}
					reuses += reused
					for _, from := range []string{"client", "probe"} {
						res := connect(from, churnConns)
						attempted += res.Attempted
						failed += res.Failed()
						GinkgoWriter.Printf("%s: re-scale %d to %d replicas, %d IPs reused, from %s: %s\n", cni, i+1, replicas, reused, from, kit.DescribeTraffic(res))
						Expect(res.Failed()).To(BeZero(), "re-scale %d to %d (%d IPs reused), from %s: %s", i+1, replicas, reused, from, kit.DescribeTraffic(res))
					}
				}
				AddReportEntry(cni+" churn", fmt.Sprintf("%d re-scales, %d IP reuses, %d/%d connections failed", churnRescales, reuses, failed, attempted))
				GinkgoWriter.Printf("%s churn: %d re-scales, %d IP reuses, %d/%d connections failed\n", cni, churnRescales, reuses, failed, attempted)
				Expect(reuses).To(BeNumerically(">", 0), "the churn reused no IP")
			})
		})
	}
})

// reusedIPs are the addresses of after that a different pod had in before.
func reusedIPs(before, after map[string]netip.Addr) []netip.Addr {
	owner := map[netip.Addr]string{}
	for name, ip := range before {
		owner[ip] = name
	}
	var out []netip.Addr
	for name, ip := range after {
		if prev, ok := owner[ip]; ok && prev != name {
			out = append(out, ip)
		}
	}
	return out
}
