package scenarios

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

// The IPVS scenarios need a kernel with IPVS. On one without (this
// project's CI machine among them), TestIPVSScenariosInVM runs them inside
// svclab's VM with Debian's stock kernel.
func skipUnlessIPVS() {
	if !roottest.HasIPVS() {
		Skip("this kernel has no IPVS; TestIPVSScenariosInVM runs the IPVS specs in svclab's VM")
	}
}

// twoNodeLab is the seed 004 lab (canal); mode is the
// proxy mode the lab starts with (canal: no bridge, so the VM needs no br_netfilter).
func twoNodeLab(mode string) string {
	return strings.ReplaceAll(strings.ReplaceAll(nodePortLab, "{{CNI}}", "canal"), "proxy: {mode: iptables}", "proxy: {mode: "+mode+"}")
}

// kubeProxyConfig is the kube-system/kube-proxy ConfigMap with the given
// mode and IPVS scheduler; syncs are quick so that graceful termination
// finishes within a spec.
func kubeProxyConfig(mode, scheduler string) string {
	return fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: kube-proxy, namespace: kube-system}
data:
  config.conf: |
    apiVersion: kubeproxy.config.k8s.io/v1alpha1
    kind: KubeProxyConfiguration
    clusterCIDR: 10.100.0.0/16
    mode: %q
    # Not upstream's 30s: the scenarios' syncs are quick, so that graceful
    # termination finishes within a spec (minSyncPeriod 0s is "0s" as
    # written: iptables takes upstream's 1s, ipvs syncs on every change).
    iptables: {minSyncPeriod: 0s, syncPeriod: 1s}
    ipvs: {minSyncPeriod: 0s, syncPeriod: 1s, scheduler: %q}
`, mode, scheduler)
}

// ipvsPods are three bare pods behind Service "web" (port 80 → 8080), two
// on HOSTA and one on HOSTB, optionally with IPVS weights.
func ipvsPods(weights ...int) string {
	var b strings.Builder
	nodes := []string{"hosta", "hostb", "hosta"}
	for i, node := range nodes {
		ann := ""
		if i < len(weights) {
			ann = fmt.Sprintf(`, annotations: {svclab.dev/weight: "%d"}`, weights[i])
		}
		fmt.Fprintf(&b, `
apiVersion: v1
kind: Pod
metadata: {name: web-%d, labels: {app: web}%s}
spec:
  nodeName: %s
  containers: [{name: netexec, image: svclab/netexec:dev, ports: [{containerPort: 8080}]}]
---`, i, ann, node)
	}
	b.WriteString(`
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`)
	return b.String()
}

// switchMode applies the ConfigMap and deletes the kube-proxy pods, as an
// operator does (seed 001), then checks /proxyMode on every node.
func switchMode(ctx SpecContext, lab *netnslab.Lab, mode, scheduler string) {
	GinkgoHelper()
	switchModeWith(ctx, lab, kubeProxyConfig(mode, scheduler), mode)
}

// switchModeWith is switchMode with the ConfigMap given whole (a
// dual-stack lab's names both families' clusterCIDR).
func switchModeWith(ctx SpecContext, lab *netnslab.Lab, configMap, mode string) {
	GinkgoHelper()
	Expect(lab.Apply(ctx, configMap)).To(Succeed())
	var nodes []string
	for _, n := range lab.Topology.Spec.Nodes {
		nodes = append(nodes, n.Name)
	}
	Expect(lab.RestartProxies(ctx, nodes, labOpts())).To(Succeed())
	want := mode
	if want == "" {
		want = "iptables"
	}
	for _, n := range nodes {
		Expect(lab.Run(n, "curl", "-s", "localhost:10249/proxyMode")).To(Equal(want), "/proxyMode on %s", n)
	}
}

// virtualServer finds the IPVS service for addr on a node.
func virtualServer(lab *netnslab.Lab, node string, addr netip.AddrPort) kit.VirtualServer {
	GinkgoHelper()
	vss, err := lab.IPVS(node)
	Expect(err).NotTo(HaveOccurred())
	for _, vs := range vss {
		if vs.Address == addr.Addr() && vs.Port == addr.Port() && vs.Protocol == kernel.TCP {
			return vs
		}
	}
	Fail(fmt.Sprintf("no IPVS virtual server %s on %s: %v", addr, node, vss))
	return kit.VirtualServer{}
}

// withoutCounters is a virtual server's configuration: its real servers'
// connection counters change as IPVS's connection entries expire, which
// says nothing about whether the proxy flushed its state.
func withoutCounters(vs kit.VirtualServer) kit.VirtualServer {
	vs.RealServers = slices.Clone(vs.RealServers)
	for i := range vs.RealServers {
		vs.RealServers[i].ActiveConn, vs.RealServers[i].InactiveConn = 0, 0
	}
	return vs
}

// expectEachInConntrack checks that each connection of res (n of them) to
// vip has its one conntrack entry on hosta (net.ipv4.vs.conntrack=1), its
// reply from a pod. clock is the run's (kit.ClockOf, taken as Traffic
// returned): a connection that ended kit.CloseTimeout or more before the
// dump may have lost its entry to an RST's CLOSE state (see
// kit.CloseTimeout); in CI's VM the spec's 6 batches took 73 s, so a
// batch's first connections can be that old. Any other missing entry fails.
func expectEachInConntrack(lab *netnslab.Lab, vip netip.AddrPort, pods map[string]netip.Addr, res *traffic.Result, clock kit.RunClock, n int) {
	GinkgoHelper()
	dumped := time.Now()
	flows, err := lab.Conntrack("hosta")
	Expect(err).NotTo(HaveOccurred())
	// One entry per connection's tuple: a client port the kernel
	// reuses while the old entry is in TIME_WAIT reopens that entry.
	sources := kit.ClientAddrs(res)
	mine := kit.FlowsTo(flows, vip, sources)
	conn := map[netip.AddrPort]traffic.Connection{}
	for _, c := range res.Connections {
		if a, err := netip.ParseAddrPort(c.LocalAddress); err == nil && c.Backend != "" {
			conn[a] = c // the later of two connections from one address: the bound is then the smaller
		}
	}
	var unexplained []netip.AddrPort
	expired := 0
	for _, a := range kit.MissingFlows(flows, vip, sources) {
		if clock.ClosedLongEnough(conn[a], dumped) {
			expired++
			continue
		}
		unexplained = append(unexplained, a)
	}
	if len(unexplained) > 0 {
		conns, _ := lab.Run("hosta", "ipvsadm", "-Lnc")
		onB, _ := lab.Conntrack("hostb")
		var ended strings.Builder
		for _, a := range unexplained {
			c := conn[a]
			fmt.Fprintf(&ended, "\n  %s: connection %d of %d, answered by %s, closed %s before the dump (the run took %s)", a, c.Index+1, n, c.Backend, clock.EndedBefore(c, dumped).Round(time.Millisecond), clock.Elapsed)
		}
		Fail(fmt.Sprintf("net.ipv4.vs.conntrack=1: one conntrack entry per IPVS connection, but %d of %d client addresses have none on hosta that CLOSE's %s timeout would explain (%d connections, %d matching flows, %d flows on hosta):%s\nthe entries on hosta that mention their ports:%s\non hostb:%s\nhosta's IPVS connections:\n%s",
			len(unexplained), len(sources), kit.CloseTimeout, n, len(mine), len(flows), ended.String(), kit.DescribeMissingFlows(flows, unexplained), kit.DescribeMissingFlows(onB, unexplained), conns))
	}
	if expired > 0 {
		By(fmt.Sprintf("%d of %d connections without an entry, each closed %s or more before the dump (an RST's CLOSE state lasts %s)", expired, n, kit.CloseTimeout, kit.CloseTimeout))
	}
	Expect(mine).To(HaveLen(len(sources)-expired), "one entry per connection, no duplicates")
	for _, f := range mine {
		Expect(pods).To(ContainElement(f.Reply.Src.Addr()), "%s: the reply comes from a pod", f)
	}
}

var _ = Describe("switching the proxy mode through the kube-proxy ConfigMap", Ordered, Label("ipvs", "mode-switch"), func() {
	var (
		lab  *netnslab.Lab
		vip  netip.AddrPort
		pods map[string]netip.Addr
	)

	BeforeAll(func(ctx SpecContext) {
		skipUnlessIPVS()
		var err error
		lab, err = netnslab.NewLab(ctx, roottest.UniqueName("mode"), twoNodeLab("iptables"), binary)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
		Expect(lab.Apply(ctx, ipvsPods())).To(Succeed())
		vip, pods = netip.AddrPortFrom(serviceVIP(lab, "web"), 80), podIPs(lab, "web")
	})

	It("starts in iptables mode: the ladder, and an even split", func() {
		rules := kit.Rules(must(lab.IPTablesSave("hosta", "nat", false)), kit.UpstreamChain("KUBE-SVC-", "default/web", "tcp"))
		Expect(rules).To(HaveLen(4))
		Expect(rules[1].Spec).To(ContainSubstring("--probability 0.33333333349"))
		n := baselineConnections()
		res, err := lab.Traffic("client", vip.String(), n)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Succeeded).To(Equal(n), kit.DescribeTraffic(res))
		expectBaselineSplit("iptables mode, client → web", countsOf(res.Backends, pods))
	})

	It("runs IPVS after the ConfigMap says ipvs and the proxy pods are deleted", func(ctx SpecContext) {
		switchMode(ctx, lab, "ipvs", "")
		vs := virtualServer(lab, "hosta", vip)
		Expect(vs.Scheduler).To(Equal("rr"))
		var got []string
		for _, rs := range vs.RealServers {
			Expect(rs.Weight).To(Equal(1))
			got = append(got, rs.Key())
		}
		var want []string
		for _, ip := range pods {
			want = append(want, netip.AddrPortFrom(ip, 8080).String())
		}
		Expect(got).To(ConsistOf(want), "the real servers are the endpoints")
		out := must(lab.Run("hosta", "ipvsadm", "-Ln"))
		Expect(out).To(ContainSubstring(fmt.Sprintf("TCP  %s rr", vip)))
		for _, w := range want {
			Expect(out).To(MatchRegexp(`-> %s\s+Masq\s+1`, strings.ReplaceAll(w, ".", `\.`)))
		}
		Expect(must(lab.Run("hosta", "ip", "addr", "show", "kube-ipvs0"))).To(ContainSubstring("inet " + vip.Addr().String() + "/32"))
	})

	It("round-robins new connections exactly evenly, each one in conntrack", func() {
		// In batches, each one's conntrack entries read right after it:
		// in the VM, emulated on a slow host, 15 of 300 connections (the
		// earliest among them) had no conntrack entry left when all 300
		// were read at the end, while their IPVS entries were still in
		// TIME_WAIT; the entries of a connection just closed were there.
		const n, batch = 300, 50
		counts := map[string]int{}
		for range n / batch {
			res, err := lab.Traffic("client", vip.String(), batch)
			Expect(err).NotTo(HaveOccurred())
			clock := kit.ClockOf(res)
			Expect(res.Succeeded).To(Equal(batch), kit.DescribeTraffic(res))
			for name, count := range res.Backends {
				counts[name] += count
			}
			expectEachInConntrack(lab, vip, pods, res, clock, batch)
		}
		Expect(counts).To(HaveLen(3))
		for name, count := range counts {
			Expect(count).To(BeNumerically("~", n/3, 1), "rr gives %s a third of %d: %v", name, n, counts)
		}
	})

	It("leaves the iptables chains behind, which --cleanup removes while traffic keeps flowing", func(ctx SpecContext) {
		left, mode, err := lab.Leftovers("hosta")
		Expect(err).NotTo(HaveOccurred())
		Expect(mode).To(Equal("ipvs"))
		foreign := left.ForeignTo("ipvs")
		Expect(foreign.Chains["nat"]).To(ContainElement(kit.UpstreamChain("KUBE-SVC-", "default/web", "tcp")), "the old KUBE-SVC chain is a leftover")
		for _, n := range []string{"hosta", "hostb"} {
			must(lab.Run(n, binary, "proxy", "--cleanup"))
		}
		switchMode(ctx, lab, "ipvs", "") // the running proxies resync; restarting makes it immediate
		for _, n := range []string{"hosta", "hostb"} {
			left, _, err := lab.Leftovers(n)
			Expect(err).NotTo(HaveOccurred())
			Expect(left.ForeignTo("ipvs").Empty()).To(BeTrue(), "after --cleanup on %s: %s", n, left.ForeignTo("ipvs"))
		}
		res, err := lab.Traffic("client", vip.String(), 30)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Succeeded).To(Equal(30), kit.DescribeTraffic(res))
	})

	It("switches back to iptables and works again", func(ctx SpecContext) {
		switchMode(ctx, lab, "", "")
		rules := kit.Rules(must(lab.IPTablesSave("hosta", "nat", false)), kit.UpstreamChain("KUBE-SVC-", "default/web", "tcp"))
		Expect(rules).To(HaveLen(4), "the ladder is back")
		res, err := lab.Traffic("client", vip.String(), 30)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Succeeded).To(Equal(30), kit.DescribeTraffic(res))
		left, _, err := lab.Leftovers("hosta")
		Expect(err).NotTo(HaveOccurred())
		Expect(left.ForeignTo("iptables").Dummy).To(BeTrue(), "kube-ipvs0 is left by the IPVS mode")
	})

	// The netns part of the same switch, iptables → nftables → iptables,
	// runs in nftables_test.go; this one needs IPVS (the VM on CI).
	It("switches to nftables, which removes the IPVS and iptables state, and on to ipvs, which removes the nftables table", func(ctx SpecContext) {
		switchMode(ctx, lab, "nftables", "")
		Expect(nftTable(lab, "hosta")).To(ContainSubstring("numgen random mod 3"), "web's three pods in the service chain")
		left, _, err := lab.Leftovers("hosta")
		Expect(err).NotTo(HaveOccurred())
		Expect(left.ForeignTo("nftables").Empty()).To(BeTrue(), "starting in nftables mode cleaned the other modes: %s", left.ForeignTo("nftables"))
		res, err := lab.Traffic("client", vip.String(), 30)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Succeeded).To(Equal(30), kit.DescribeTraffic(res))

		switchMode(ctx, lab, "ipvs", "")
		Expect(nftTable(lab, "hosta")).To(BeEmpty(), "starting in ipvs mode deleted table ip kube-proxy")
		Expect(virtualServer(lab, "hosta", vip).RealServers).To(HaveLen(3))
		res, err = lab.Traffic("client", vip.String(), 30)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Succeeded).To(Equal(30), kit.DescribeTraffic(res))
	})
})

var _ = Describe("IPVS schedulers and graceful termination", Ordered, Label("ipvs"), func() {
	var (
		lab *netnslab.Lab
		vip netip.AddrPort
	)

	BeforeAll(func(ctx SpecContext) {
		skipUnlessIPVS()
		var err error
		lab, err = netnslab.NewLab(ctx, roottest.UniqueName("sched"), twoNodeLab("ipvs"), binary)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
		Expect(lab.Apply(ctx, ipvsPods(3, 1, 1)+"\n---\n"+`
apiVersion: v1
kind: Pod
metadata: {name: probe-a}
spec: {nodeName: hosta, containers: [{name: client, image: svclab/netexec:dev}]}
`)).To(Succeed())
		vip = netip.AddrPortFrom(serviceVIP(lab, "web"), 80)
	})

	// First, before other specs leave TIME_WAIT connections (inactive, up to
	// 2 minutes) on the real servers, which would rightly hold up the deletion.
	It("drains a removed endpoint: weight 0 while its connection lives, deleted after it ends", func(ctx SpecContext) {
		switchMode(ctx, lab, "ipvs", "rr")
		held, err := lab.Hold("client", vip.String())
		Expect(err).NotTo(HaveOccurred())
		drained := held.Backend
		ip := podIPs(lab, "web")[drained]
		By("taking " + drained + " out of the Service (its label changes; the pod keeps running)")
		relabeled := strings.Replace(ipvsPods(3, 1, 1), "name: "+drained+", labels: {app: web}", "name: "+drained+", labels: {app: drained}", 1)
		Expect(lab.Apply(ctx, relabeled)).To(Succeed())
		rsOf := func() *kernel.RealServer {
			for _, rs := range virtualServer(lab, "hosta", vip).RealServers {
				if rs.Address == ip {
					return &rs
				}
			}
			return nil
		}
		rs := rsOf()
		Expect(rs).NotTo(BeNil(), "the real server stays while a connection uses it")
		Expect(rs.Weight).To(Equal(0))
		Expect(rs.ActiveConn).To(BeNumerically(">=", 1))
		res, err := lab.Traffic("client", vip.String(), 30)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Succeeded).To(Equal(30), kit.DescribeTraffic(res))
		Expect(res.Backends).NotTo(HaveKey(drained), "no new connection goes to a draining real server")
		By("ending the held connection (RST); the next syncs delete the real server")
		Expect(held.Reset()).To(Succeed())
		for start := time.Now(); rsOf() != nil; time.Sleep(time.Second) {
			if time.Since(start) > 60*time.Second {
				conns, _ := lab.Run("hosta", "ipvsadm", "-Lnc")
				table, _ := lab.Run("hosta", "ipvsadm", "-Ln")
				Fail(fmt.Sprintf("the drained real server %s is still there 60s after its connection ended\n%s\n%s", ip, table, conns))
			}
		}
	})
	It("wrr follows the weights (svclab.dev/weight 3:1:1)", func(ctx SpecContext) {
		Expect(lab.Apply(ctx, ipvsPods(3, 1, 1))).To(Succeed()) // the drained pod is back in the Service
		switchMode(ctx, lab, "ipvs", "wrr")
		vs := virtualServer(lab, "hosta", vip)
		Expect(vs.Scheduler).To(Equal("wrr"))
		const n = 500
		res, err := lab.Traffic("client", vip.String(), n)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Succeeded).To(Equal(n), kit.DescribeTraffic(res))
		Expect(res.Backends["web-0"]).To(BeNumerically("~", 300, 3), "weight 3 of 5: %v", res.Backends)
		Expect(res.Backends["web-1"]).To(BeNumerically("~", 100, 3), "weight 1 of 5: %v", res.Backends)
		Expect(res.Backends["web-2"]).To(BeNumerically("~", 100, 3), "weight 1 of 5: %v", res.Backends)
	})

	It("sh sends one client to one backend", func(ctx SpecContext) {
		switchMode(ctx, lab, "ipvs", "sh")
		for _, from := range []string{"client", "probe-a"} {
			res, err := lab.Traffic(from, vip.String(), 50)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Succeeded).To(Equal(50), kit.DescribeTraffic(res))
			Expect(res.Backends).To(HaveLen(1), "source hashing: every connection from %s to one backend: %v", from, res.Backends)
		}
	})

	It("exits on a scheduler the kernel lacks, as upstream: the pod crash-loops saying why, /proxyMode refused, the node's IPVS state kept", func(ctx SpecContext) {
		before := virtualServer(lab, "hosta", vip)
		Expect(lab.Apply(ctx, kubeProxyConfig("ipvs", "foo"))).To(Succeed())
		// The kubelet's back-off (10 s, doubling) would restart the proxy
		// during the spec where everything is slow (emulated in the VM on a
		// slow host), and the restart would read the ConfigMap fixed below
		// and recover by itself; an hour keeps it crash-looping until the
		// spec restarts it.
		crashLooping := labOpts()
		crashLooping.RestartBackoff = process.Backoff{Initial: time.Hour, Max: time.Hour}
		err := lab.RestartProxies(ctx, []string{"hosta"}, crashLooping)
		Expect(err).To(MatchError(ContainSubstring(`ipvs.scheduler "foo": the kernel has no IPVS scheduler foo`)))
		Expect(err).To(MatchError(ContainSubstring("proxy on hosta: kube-proxy-hosta is CrashLoopBackOff")))
		Expect(withoutCounters(virtualServer(lab, "hosta", vip))).To(Equal(withoutCounters(before)), "nothing flushed")
		_, err = lab.Run("hosta", "curl", "-s", "localhost:10249/proxyMode")
		Expect(err).To(HaveOccurred(), "a proxy that cannot start in its mode exits: /proxyMode is refused")
		res, err := lab.Traffic("client", vip.String(), 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Succeeded).To(Equal(10), "traffic still flows through the kept state: %s", kit.DescribeTraffic(res))
		By("fixing the ConfigMap: apply stores it but fails naming the crash-looping node; restarting the proxy recovers")
		Expect(lab.Apply(ctx, kubeProxyConfig("ipvs", "rr"))).To(MatchError(ContainSubstring("proxy on hosta")))
		Expect(lab.RestartProxies(ctx, []string{"hosta"}, labOpts())).To(Succeed())
		switchMode(ctx, lab, "ipvs", "rr")
	})
})

// countsOf orders per-backend counts by pod name.
func countsOf(backends map[string]int, pods map[string]netip.Addr) []float64 {
	var out []float64
	for _, name := range slices.Sorted(maps.Keys(pods)) {
		out = append(out, float64(backends[name]))
	}
	return out
}
