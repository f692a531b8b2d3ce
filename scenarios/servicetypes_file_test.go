package scenarios

import (
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns/workload"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

// serviceTypesFile is the manifest, the one file that applies
// unchanged to a netns lab (here) and to a kind cluster (scenarios/kinde2e,
// with svclab's load balancer): Namespace svctypes, a StatefulSet with its
// headless Service, a DaemonSet, web pods behind a LoadBalancer Service
// open to 192.168.55.0/24, an external IP, an ExternalName and a
// ClientIP-affinity Service.
var serviceTypesFile = filepath.Join("..", "clusters", "workloads", "service-types-all.yaml")

// Numbers: stickyN sequential connections from one client all reach one
// of three pods; without affinity that happens with probability
// 3·(1/3)^30 = 1.5e-14.
var _ = Describe("the Service types manifest file, unchanged on a netns lab", Ordered, Label("service-types", "multi-node", "iptables"), func() {
	const ns = "svctypes"
	var (
		lab  *netnslab.Lab
		objs func() *labstore.State
	)
	BeforeAll(func(ctx SpecContext) {
		manifest, err := os.ReadFile(serviceTypesFile)
		Expect(err).NotTo(HaveOccurred())
		lab, err = netnslab.NewLab(ctx, roottest.UniqueName("svcf"), strings.ReplaceAll(serviceTypesLab, "{{MODE}}", "iptables"), binary)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
		Expect(lab.Apply(ctx, string(manifest))).To(Succeed())
		objs = func() *labstore.State {
			st, _, err := lab.Store.ReadObjects()
			Expect(err).NotTo(HaveOccurred())
			return st
		}
	})
	// run makes n connections from host to target, each bounded by timeout:
	// answered for those that must answer (a bound for a loaded host),
	// dropped for those that must not (the wait is the outcome).
	const answered, dropped = 10 * time.Second, 2 * time.Second
	run := func(host string, target netip.AddrPort, n int, sequential bool, timeout time.Duration) *traffic.Result {
		GinkgoHelper()
		o := traffic.Options{Target: target.String(), Connections: n, Timeout: timeout, Deadline: 2 * time.Minute}
		if sequential {
			o.Parallelism = 1
		}
		res, err := lab.Lab.Traffic(host, o, labOpts())
		Expect(err).NotTo(HaveOccurred())
		return res
	}

	It("gives the LoadBalancer Service a pool address, reached by the client in its source range and not by the outsider", func() {
		lb := objs().Service(ns, "lb")
		a := workload.LoadBalancerIngress(lb)
		Expect(a).To(Equal(netip.MustParseAddr("192.168.100.10")), "the lowest address of the lab's pool")
		Expect(*lb.Status.LoadBalancer.Ingress[0].IPMode).To(Equal(corev1.LoadBalancerIPModeVIP))
		in := run("client", netip.AddrPortFrom(a, 80), 30, false, answered)
		Expect(in.Succeeded).To(Equal(30), kit.DescribeTraffic(in))
		for name := range in.Backends {
			Expect(name).To(HavePrefix("web-"))
		}
		out := run("outsider", netip.AddrPortFrom(a, 80), 5, false, dropped)
		Expect(out.Succeeded).To(BeZero(), kit.DescribeTraffic(out))
		ext := run("outsider", netip.MustParseAddrPort("203.0.113.7:80"), 5, false, answered)
		Expect(ext.Succeeded).To(Equal(5), "the outsider is routed (to the external IP): %s", kit.DescribeTraffic(ext))
	})

	It("keeps one client on one pod with ClientIP affinity", func() {
		sticky := objs().Service(ns, "sticky")
		res := run("client", netip.AddrPortFrom(netip.MustParseAddr(sticky.Spec.ClusterIP), 80), 30, true, answered)
		Expect(res.Succeeded).To(Equal(30), kit.DescribeTraffic(res))
		Expect(res.Backends).To(HaveLen(1), kit.DescribeTraffic(res))
	})

	It("runs the StatefulSet as db-0 and db-1, the DaemonSet once per node; the ExternalName and headless Services have no rules", func() {
		st := objs()
		var db, nodes []string
		for _, p := range st.Pods {
			switch {
			case p.Namespace == ns && p.Labels["app"] == "db":
				db = append(db, p.Name)
			case p.Namespace == ns && p.Labels["app"] == "agent":
				nodes = append(nodes, p.Spec.NodeName)
			}
		}
		sort.Strings(db)
		sort.Strings(nodes)
		Expect(db).To(Equal([]string{"db-0", "db-1"}))
		Expect(nodes).To(Equal([]string{"hosta", "hostb"}))
		Expect(st.Service(ns, "cname").Spec.ClusterIP).To(BeEmpty())
		Expect(st.Service(ns, "db").Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
		nat := must(lab.IPTablesSave("hosta", "nat", false))
		Expect(nat).To(ContainSubstring(ns + "/lb"))
		Expect(nat).NotTo(ContainSubstring(ns + "/cname"))
		Expect(nat).NotTo(ContainSubstring(ns + "/db"))
	})
})
