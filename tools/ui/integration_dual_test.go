package ui_test

import (
	"context"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/ui"
)

// webSVCChain is upstream's KUBE-SVC chain of the lesson's web Service
// (port http): the same name in iptables and ip6tables.
const webSVCChain = "KUBE-SVC-CDGGSHYLG3RE2FKL"

// TestIntegrationPageDualStack serves the page of a real dual-stack lab
// (clusters/dual-stack.yaml) running the dual-stack lesson's web Service
// (PreferDualStack, two pods) and loads it in headless Chromium, sending
// traffic to the Service's IPv6 cluster IP by the page's button. The page
// must offer both cluster IPs; the topology must show the nodes' IPv6
// addresses and their vxlan-v6.calico devices; each node must show its
// ip6tables chains, marked IPv6, beside the IPv4 ones of the same names;
// the IPv6 KUBE-SVC chain's endpoint rules (to the pods' IPv6 addresses)
// must count exactly the connections sent and the IPv4 one none; the bars
// must name both pods with a pass; and after `svclab trace` to the IPv6
// cluster IP the page shows that trace.
func TestIntegrationPageDualStack(t *testing.T) {
	roottest.Require(t, "builds a lab from network namespaces")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := hostprog.Ensure(ctx, os.Stderr, hostprog.Chromium); err != nil {
		t.Fatalf("the page test needs Debian's chromium: %v", err)
	}
	bin := roottest.SharedBinary(t)
	lab := labWith(t, bin, "dual-stack.yaml", "dual-stack", "lessons/dual-stack/web.yaml")
	ipv6 := webClusterIPv6(t, lab)
	srv := servePage(ctx, t, lab, bin)

	q := url.Values{"send": {"default/web:80 (IPv6)"}, "count": {strconv.Itoa(trafficCount)}}
	dom := dumpDOM(ctx, t, srv.SessionURL()+"&"+q.Encode(), true)

	checkNodesAndTopology(t, dom, lab)
	checkDualTopology(t, dom, lab)
	for _, opt := range []string{`<option value="default/web:80"`, `<option value="default/web:80 (IPv6)" title="[` + ipv6.String() + `]:80">`} {
		if !strings.Contains(dom, opt) {
			t.Errorf("the Service list has no %s:\n%s", opt, section(dom, `id="traffic-panel"`))
		}
	}
	checkDualChains(t, dom, lab)
	checkDualTraffic(t, dom, ipv6)

	runSvclab(t, bin, "trace", "--lab", lab.Name(), "--from", "client", "--to", "["+ipv6.String()+"]:80")
	dom = dumpDOM(ctx, t, srv.SessionURL(), true)
	if !regexp.MustCompile(`<img src="/api/trace\.svg\?t=[^"]+" alt="the last svclab trace">`).MatchString(dom) {
		t.Errorf("the trace panel does not show the store's trace:\n%s", section(dom, `id="trace"`))
	}
	path, err := lab.Store.Confine(ui.TraceSVGFile)
	if err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "["+ipv6.String()+"]:80") {
		t.Errorf("the trace the page shows is not to [%s]:80", ipv6)
	}
}

// webClusterIPv6 is the web Service's IPv6 cluster IP, its second one.
func webClusterIPv6(t *testing.T, lab *netns.Lab) netip.Addr {
	t.Helper()
	objs, _, err := lab.Store.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	svc := objs.Service("default", "web")
	if svc == nil || len(svc.Spec.ClusterIPs) != 2 {
		t.Fatalf("the web Service has no cluster IP per family: %+v", svc)
	}
	ip, err := netip.ParseAddr(svc.Spec.ClusterIPs[1])
	if err != nil || !ip.Is6() {
		t.Fatalf("the web Service's second cluster IP %q is not IPv6", svc.Spec.ClusterIPs[1])
	}
	return ip
}

// checkDualTopology: every node's IPv6 address and IPv6 VXLAN device in
// the topology's SVG.
func checkDualTopology(t *testing.T, dom string, lab *netns.Lab) {
	t.Helper()
	topo := section(dom, `id="topology"`)
	for _, n := range lab.Topology.Spec.Nodes {
		if len(n.IPs) != 2 || !strings.Contains(topo, n.IPs[1].String()) {
			t.Errorf("the topology does not show node %s's IPv6 address (%v)", n.Name, n.IPs)
		}
	}
	if c := strings.Count(topo, "vxlan-v6.calico vxlan"); c != len(lab.Topology.Spec.Nodes) {
		t.Errorf("the topology shows %d vxlan-v6.calico devices, want one per node", c)
	}
}

// checkDualChains: per node, the IPv4 and the IPv6 (marked) nat chains;
// on the first node, where the client's traffic enters, the IPv6 web
// chain's endpoint rules go to the pods' IPv6 addresses and count the
// connections sent, the IPv4 chain's count none.
func checkDualChains(t *testing.T, dom string, lab *netns.Lab) {
	t.Helper()
	for _, n := range lab.Topology.Spec.Nodes {
		node := cut(dom, `data-node="`+n.Name+`"`, `data-node=`)
		for _, chain := range []string{"KUBE-SERVICES", "KUBE-NODEPORTS", webSVCChain, "KUBE-POSTROUTING"} {
			if !strings.Contains(node, `data-chain="`+chain+`"><h4>`+chain+`</h4>`) {
				t.Errorf("node %s shows no IPv4 chain %s", n.Name, chain)
			}
			if !strings.Contains(node, `data-chain="`+chain+`" data-family="IPv6"><h4>`+chain+`<span class="family">IPv6</span></h4>`) {
				t.Errorf("node %s shows no IPv6 chain %s", n.Name, chain)
			}
		}
	}
	first := cut(dom, `data-node="`+lab.Topology.Spec.Nodes[0].Name+`"`, `data-node=`)
	v4 := cut(first, `data-chain="`+webSVCChain+`">`, `data-chain=`)
	v6 := cut(first, `data-chain="`+webSVCChain+`" data-family="IPv6">`, `data-chain=`)
	if n, sum := endpointCounts(v4); n != 2 || sum != 0 {
		t.Errorf("the IPv4 web chain shows %d endpoint rules counting %d, want 2 counting 0:\n%s", n, sum, v4)
	}
	if n, sum := endpointCounts(v6); n != 2 || sum != trafficCount {
		t.Errorf("the IPv6 web chain shows %d endpoint rules counting %d, want 2 counting %d:\n%s", n, sum, trafficCount, v6)
	}
	if c := len(regexp.MustCompile(`-&gt; \[fd00:10:244:[0-9a-f:]+\]:8080`).FindAllString(v6, -1)); c != 2 {
		t.Errorf("the IPv6 web chain names %d IPv6 endpoints, want 2:\n%s", c, v6)
	}
}

// endpointCounts are a chain's rules to KUBE-SEP chains: how many, and
// their packets.
func endpointCounts(chain string) (rules, packets int) {
	for _, r := range regexp.MustCompile(`<li data-packets="(\d+)"[^>]*>.*?→ (KUBE-[A-Z0-9-]+)`).FindAllStringSubmatch(chain, -1) {
		if strings.HasPrefix(r[2], "KUBE-SEP-") {
			n, _ := strconv.Atoi(r[1])
			packets += n
			rules++
		}
	}
	return rules, packets
}

// checkDualTraffic: a pass to [IPv6]:80, the bars naming both pods.
func checkDualTraffic(t *testing.T, dom string, ipv6 netip.Addr) {
	t.Helper()
	res := section(dom, `id="traffic-result"`)
	msg := section(dom, `id="traffic-message"`)
	if !strings.Contains(res, `data-verdict="pass"`) || !strings.Contains(res, `data-service="default/web:80 (IPv6)"`) {
		t.Fatalf("no passing run to the IPv6 cluster IP in the traffic panel:\n%s\nmessage: %s", res, msg)
	}
	if !strings.Contains(msg, "("+"["+ipv6.String()+"]:80)") {
		t.Errorf("the traffic message does not name [%s]:80: %s", ipv6, msg)
	}
	for _, pod := range []string{">web-a<", ">web-b<"} {
		if !strings.Contains(res, pod) {
			t.Errorf("the bars do not name %s", pod)
		}
	}
}
