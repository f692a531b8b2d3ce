package scenarios

import (
	"net/netip"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns/workload"
	"github.com/svclab/svclab/proxy/server"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

// serviceTypesLab is seed 004's two nodes with a load balancer pool, a
// block of external IPs, and two clients on different LANs: "client"
// (192.168.55.230, inside the LoadBalancer Service's source range) and
// "outsider" (192.168.66.10, outside it). The router sends the pool and
// the block to HOSTA, the announcing node. Canal, so that the IPVS variant
// runs in the VM without br_netfilter.
const serviceTypesLab = `
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: "{{NAME}}"}
spec:
  cni: canal
  podSubnet: 10.100.0.0/16
  serviceSubnet: 10.254.0.0/16
  proxy: {mode: {{MODE}}}
  loadBalancer: {pool: 192.168.100.10-192.168.100.20}
  externalIPs: [203.0.113.0/24]
  nodes:
  - {name: hosta, ip: 192.168.16.73/20, podCIDR: 10.100.40.0/24}
  - {name: hostb, ip: 192.168.16.139/20, podCIDR: 10.100.81.0/24}
  clients:
  - {name: client, ip: 192.168.55.230/24}
  - {name: outsider, ip: 192.168.66.10/24}
`

// affinitySeconds is the sticky Service's sessionAffinityConfig timeout:
// short, so that a spec can wait it out.
const affinitySeconds = 5

// serviceTypes is the manifest the specs apply unchanged: three pods
// (web-0 and web-2 on HOSTA, web-1 on HOSTB) behind four Services of the
// types: a LoadBalancer Service open to 192.168.55.0/24 with
// externalTrafficPolicy Local, a ClusterIP Service with an external IP, an
// ExternalName Service, and a ClientIP-affinity Service.
var serviceTypes = ipvsPods() + `---
apiVersion: v1
kind: Service
metadata: {name: lb}
spec:
  type: LoadBalancer
  selector: {app: web}
  loadBalancerSourceRanges: [192.168.55.0/24]
  externalTrafficPolicy: Local
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: ext}
spec:
  selector: {app: web}
  externalIPs: [203.0.113.7]
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: cname}
spec:
  type: ExternalName
  externalName: www.example.com
---
apiVersion: v1
kind: Service
metadata: {name: sticky}
spec:
  selector: {app: web}
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: ` + itoa(affinitySeconds) + `}}
  ports: [{port: 80, targetPort: 8080}]
`

// The numbers of the specs below.
//
//   - ETP Local: the load balancer IP reaches HOSTA, whose local endpoints
//     are web-0 and web-2. A proxy that ignored the policy would pick
//     each of the three pods with probability 1/3, so missing web-1 in all
//     of localN connections has probability (2/3)^40 = 9.0e-8.
//   - Affinity: stickyN sequential connections from one client all reach
//     one pod. Without affinity (uniform over three pods) that happens with
//     probability 3·(1/3)^30 = 1.5e-14.
//   - After the timeout: in each of expiryRounds rounds, both clients wait
//     out the timeout and then make expiryBurst sequential connections
//     (all to one pod: affinity again). After expiry the pod is chosen
//     anew, uniformly, so a correct proxy keeps both clients on their
//     first pod in every round with probability (3^-(8-1))^2 = 2.1e-7;
//     a proxy whose affinity never expires always does.
const (
	localN       = 40
	stickyN      = 30
	expiryRounds = 8
	expiryBurst  = 3
	deniedN      = 10
)

var _ = Describe("Service types: LoadBalancer with source ranges, external IPs, ExternalName, ClientIP affinity", Label("service-types", "multi-node"), func() {
	for _, mode := range []string{"iptables", "ipvs"} {
		labels := Label("iptables")
		if mode == "ipvs" {
			labels = Label("ipvs")
		}
		Context("in "+mode+" mode", Ordered, labels, func() {
			var (
				lab       *netnslab.Lab
				lbVIP     netip.AddrPort
				extIP     = netip.MustParseAddrPort("203.0.113.7:80")
				clientIP  = netip.MustParseAddr("192.168.55.230")
				outsideIP = netip.MustParseAddr("192.168.66.10")
				hostb     = netip.MustParseAddr("192.168.16.139")
				lbSvc     *corev1.Service
				sticky    netip.AddrPort
			)

			BeforeAll(func(ctx SpecContext) {
				if mode == "ipvs" {
					skipUnlessIPVS()
				}
				var err error
				lab, err = netnslab.NewLab(ctx, roottest.UniqueName("svct"), strings.ReplaceAll(serviceTypesLab, "{{MODE}}", mode), binary)
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
				Expect(lab.Apply(ctx, serviceTypes)).To(Succeed())
				objs, _, err := lab.Store.ReadObjects()
				Expect(err).NotTo(HaveOccurred())
				lbSvc = objs.Service("default", "lb")
				Expect(lbSvc).NotTo(BeNil())
				lbVIP = netip.AddrPortFrom(workload.LoadBalancerIngress(lbSvc), 80)
				sticky = netip.AddrPortFrom(serviceVIP(lab, "sticky"), 80)
			})

			// run makes n connections from host to target, one at a time
			// when sequential is set (so that every connection after the
			// first finds the affinity entry the first one made).
			run := func(host string, target netip.AddrPort, n int, path string, sequential bool) *traffic.Result {
				GinkgoHelper()
				o := traffic.Options{Target: target.String(), Connections: n, Path: path, Timeout: 10 * time.Second, Deadline: 5 * time.Minute}
				if sequential {
					o.Parallelism = 1
				}
				res, err := lab.Lab.Traffic(host, o, labOpts())
				Expect(err).NotTo(HaveOccurred())
				return res
			}
			// oneBackend asserts that every connection succeeded and reached
			// the same pod, and returns it.
			oneBackend := func(res *traffic.Result, what string) string {
				GinkgoHelper()
				Expect(res.Succeeded).To(Equal(res.Requested), kit.DescribeTraffic(res))
				Expect(res.Backends).To(HaveLen(1), "%s: every connection reaches one pod: %v", what, res.Backends)
				for name := range res.Backends {
					return name
				}
				return ""
			}

			It("applies the manifest unchanged: a pool address (ipMode VIP), node ports, a health check node port; the ExternalName has no cluster IP", func() {
				Expect(lbVIP.Addr()).To(Equal(netip.MustParseAddr("192.168.100.10")), "the lowest address of the pool")
				Expect(*lbSvc.Status.LoadBalancer.Ingress[0].IPMode).To(Equal(corev1.LoadBalancerIPModeVIP))
				Expect(lbSvc.Spec.Ports[0].NodePort).To(BeNumerically(">=", workload.NodePortMin))
				Expect(lbSvc.Spec.HealthCheckNodePort).To(BeNumerically(">=", workload.NodePortMin))
				Expect(lbSvc.Spec.HealthCheckNodePort).NotTo(Equal(lbSvc.Spec.Ports[0].NodePort))
				objs, _, err := lab.Store.ReadObjects()
				Expect(err).NotTo(HaveOccurred())
				cname := objs.Service("default", "cname")
				Expect(cname.Spec.ClusterIP).To(BeEmpty())
				for _, s := range objs.EndpointSlices {
					Expect(s.Labels["kubernetes.io/service-name"]).NotTo(Equal("cname"), "an ExternalName Service has no endpoints")
				}
				if mode == "iptables" {
					nat := must(lab.IPTablesSave("hosta", "nat", false))
					Expect(nat).NotTo(ContainSubstring("default/cname"), "no rules for an ExternalName Service")
					Expect(nat).To(ContainSubstring("-d " + lbVIP.Addr().String() + "/32"))
				}
			})

			It("sends the allowed client to the load balancer IP, kept its source IP and used HOSTA's local pods only (externalTrafficPolicy Local)", func() {
				res := run("client", lbVIP, localN, "/hostname", false)
				Expect(res.Succeeded).To(Equal(localN), kit.DescribeTraffic(res))
				for name := range res.Backends {
					Expect(name).To(BeElementOf("web-0", "web-2"), "HOSTA's local endpoints: %v", res.Backends)
				}
				res = run("client", lbVIP, localN, "/clientip", false)
				Expect(res.Succeeded).To(Equal(localN), kit.DescribeTraffic(res))
				for _, c := range res.Connections {
					Expect(netip.MustParseAddrPort(c.Backend).Addr()).To(Equal(clientIP), "the pod sees the client's own address")
				}
			})

			It("drops the denied client at the load balancer IP, which still reaches the external IP", func() {
				o := traffic.Options{Target: lbVIP.String(), Connections: deniedN, Timeout: time.Second, Deadline: time.Minute}
				res, err := lab.Lab.Traffic("outsider", o, labOpts())
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Succeeded).To(BeZero(), kit.DescribeTraffic(res))
				Expect(res.Failures).To(Equal(map[traffic.FailureKind]int{traffic.FailureTimeout: deniedN}), "dropped, not refused: %s", kit.DescribeTraffic(res))

				res = run("outsider", extIP, 10, "/clientip", false)
				Expect(res.Succeeded).To(Equal(10), "the route from the outsider works: %s", kit.DescribeTraffic(res))
				for _, c := range res.Connections {
					// externalTrafficPolicy Cluster: masqueraded to HOSTA.
					Expect(netip.MustParseAddrPort(c.Backend).Addr()).NotTo(Equal(outsideIP))
				}
			})

			It("keeps the client's source IP on HOSTB's node port of the Local Service, served by HOSTB's pod only", func() {
				np := netip.AddrPortFrom(hostb, uint16(lbSvc.Spec.Ports[0].NodePort))
				res := run("client", np, localN, "/hostname", false)
				Expect(res.Backends).To(Equal(map[string]int{"web-1": localN}), kit.DescribeTraffic(res))
				res = run("client", np, 10, "/clientip", false)
				Expect(res.Succeeded).To(Equal(10), kit.DescribeTraffic(res))
				for _, c := range res.Connections {
					Expect(netip.MustParseAddrPort(c.Backend).Addr()).To(Equal(clientIP))
				}
			})

			It("answers on the health check node port as kube-proxy does: HOSTA has 2 local endpoints, HOSTB 1", func() {
				for node, local := range map[string]int{"192.168.16.73": 2, "192.168.16.139": 1} {
					url := "http://" + netip.AddrPortFrom(netip.MustParseAddr(node), uint16(lbSvc.Spec.HealthCheckNodePort)).String() + "/"
					out := must(lab.Run("client", "curl", "-s", "-w", "\n%{http_code}", url))
					want := server.ServiceHealthBody(server.ServiceHealthCheck{Namespace: "default", Name: "lb", LocalEndpoints: local}, true)
					Expect(out).To(Equal(want+"\n200"), "GET %s", url)
				}
			})

			It("reaches the external IP from the client", func() {
				res := run("client", extIP, 30, "/hostname", false)
				Expect(res.Succeeded).To(Equal(30), kit.DescribeTraffic(res))
				for name := range res.Backends {
					Expect(name).To(BeElementOf("web-0", "web-1", "web-2"))
				}
			})

			It("keeps one client on one pod with ClientIP affinity", func() {
				first := oneBackend(run("client", sticky, stickyN, "/hostname", true), "client → sticky")
				GinkgoWriter.Printf("affinity: %d connections from the client, all to %s\n", stickyN, first)
			})

			It("lets a client move to another pod once the affinity timeout has passed", func() {
				if mode == "ipvs" {
					Skip("IPVS keeps a persistence template while connections it controls are in its table (TIME_WAIT lasts 2 minutes by default), so the timeout alone does not end it")
				}
				seen := map[string]map[string]bool{"client": {}, "outsider": {}}
				for round := range expiryRounds {
					time.Sleep(affinitySeconds*time.Second + 1500*time.Millisecond)
					for _, host := range []string{"client", "outsider"} {
						pod := oneBackend(run(host, sticky, expiryBurst, "/hostname", true), host+" → sticky")
						seen[host][pod] = true
						GinkgoWriter.Printf("round %d: %s → %s\n", round, host, pod)
					}
				}
				Expect(len(seen["client"])+len(seen["outsider"])).To(BeNumerically(">", 2),
					"after each timeout a client's pod is chosen anew; both clients kept one pod for %d rounds: %v", expiryRounds, seen)
			})
		})
	}
})
