package conformance

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/scenarios/kit"
)

// serviceSpecsMore registers the second batch of Service behaviour specs,
// which any proxy must pass: NodePort from a pod, a node and outside
// (nodeport_sources.go), ClientIP session affinity and its timeout
// (affinity.go), internal and external traffic policy Local
// (trafficpolicy.go), the terminating-endpoint fallback (terminating.go),
// hairpin (hairpin.go), ExternalName and headless Services through
// cluster DNS (dns.go) and LoadBalancer addresses (loadbalancer.go).
func (s *suite) serviceSpecsMore(f familyRun) {
	s.nodePortSourcesSpecs(f)
	s.affinitySpecs(f)
	s.trafficPolicySpecs(f)
	s.terminatingSpecs(f)
	s.hairpinSpecs(f)
	s.dnsSpecs(f)
	s.loadBalancerSpecs(f)
}

// sender is one client's way to one target: it makes the connections
// TrafficOptions ask for and says what happened to each.
type sender struct {
	// what names client and target for the specs' messages.
	what string
	send func(ctx context.Context, o kit.TrafficOptions) (*traffic.Result, error)
}

// fromClient sends from a client (a pod, or outside the pod network) of
// the workspace.
func fromClient(ws kit.Workspace, c kit.Client, target netip.AddrPort) sender {
	who := "pod " + c.Pod
	if c.Pod == "" {
		who = "outside the pod network (via " + c.Node + ")"
	}
	return sender{what: who + " → " + target.String(), send: func(ctx context.Context, o kit.TrafficOptions) (*traffic.Result, error) {
		return ws.TrafficWith(ctx, c, target, o)
	}}
}

// fromNode sends from a node's host network.
func fromNode(ws kit.Workspace, node string, target netip.AddrPort) sender {
	return sender{what: "node " + node + "'s host network → " + target.String(), send: func(ctx context.Context, o kit.TrafficOptions) (*traffic.Result, error) {
		return ws.TrafficFromNode(ctx, node, target, o)
	}}
}

// answeredByAll makes enough connections that a fair split leaves out one
// of the endpoints with probability below 1e-9, and asserts that each was
// answered, by the endpoints and every one of them.
func answeredByAll(ctx context.Context, s sender, endpoints []string) *traffic.Result {
	GinkgoHelper()
	// P(some endpoint gets none) ≤ k (1 − 1/k)^n under a uniform split.
	n := 10
	if k := float64(len(endpoints)); k > 1 {
		n = max(n, int(math.Ceil(math.Log(1e-9/k)/math.Log(1-1/k))))
	}
	By(fmt.Sprintf("%d connections %s: each answered, by every one of %v", n, s.what, endpoints))
	res, err := s.send(ctx, kit.TrafficOptions{Connections: n})
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Succeeded).To(Equal(n), "%s: every connection answers: %s", s.what, kit.DescribeTraffic(res))
	Expect(slices.Sorted(maps.Keys(res.Backends))).To(Equal(slices.Sorted(slices.Values(endpoints))),
		"%s: every endpoint answers, and only they do: %v", s.what, res.Backends)
	return res
}

// dropTimeout is how long a connection the proxy drops is given before it
// counts as dropped: a connection that is answered at all is answered in
// milliseconds, and a DROP shows only as silence.
const dropTimeout = 3 * time.Second

// expectNotAnswered makes a few connections and asserts that no endpoint
// answered any: each was dropped (its timeout passed: kube-proxy's
// iptables and nftables modes DROP traffic a traffic policy leaves
// without endpoints) or refused with an ICMP error (IPVS answers a
// virtual server without real servers so) — never answered, never reset.
func expectNotAnswered(ctx context.Context, s sender) {
	GinkgoHelper()
	const n = 3
	By(fmt.Sprintf("%d connections %s, %s each: none answered", n, s.what, dropTimeout))
	res, err := s.send(ctx, kit.TrafficOptions{Connections: n, Timeout: dropTimeout})
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Attempted).To(Equal(n), kit.DescribeTraffic(res))
	for _, c := range res.Connections {
		Expect(c.Failure).To(BeElementOf(traffic.FailureTimeout, traffic.FailureRefused, traffic.FailureUnreachable),
			"%s: connection %d: %q (%s %s) after %s; want no answer: dropped, or refused by an ICMP error", s.what, c.Index, c.Backend, c.Failure, c.Error, c.Duration)
	}
	By(fmt.Sprintf("%s: %v", s.what, res.Failures))
}

// httpStatus is the HTTP status a connection of the traffic client got:
// 200 for an answer, else the status its error names ("HTTP status 503
// Service Unavailable"), or 0 when it got none.
func httpStatus(c traffic.Connection) int {
	if c.Failure == "" {
		return 200
	}
	if m := httpStatusText.FindStringSubmatch(c.Error); m != nil {
		code, _ := strconv.Atoi(m[1])
		return code
	}
	return 0
}

// httpStatusText is how the traffic client reports a status other than 200.
var httpStatusText = regexp.MustCompile(`HTTP status (\d{3})\b`)

// nodePortOf is a node's address with the Service's first node port.
func nodePortOf(n kit.Node, port int32) netip.AddrPort {
	return netip.AddrPortFrom(n.IP, uint16(port))
}

// atMost are the first n nodes: the specs that go to every node's
// address stop at two, enough for "this node and another".
func atMost(nodes []kit.Node, n int) []kit.Node {
	return nodes[:min(n, len(nodes))]
}

// server is one netexec pod of a spec's workload.
type server struct {
	name, app string
	// node pins the pod to a node ("" leaves it to the scheduler).
	node string
	// delayShutdown is agnhost netexec's --delay-shutdown: seconds the
	// server goes on answering after SIGTERM; the pod's grace period is
	// as long.
	delayShutdown int
}

// serverPod is the pod (a "---" document): netexec on 8080, ready once
// it answers /hostname.
func (s *suite) serverPod(p server) string {
	var extra []string
	if p.node != "" {
		extra = append(extra, "nodeName: "+p.node)
	}
	args := "[netexec, --http-port=8080]"
	if p.delayShutdown > 0 {
		extra = append(extra, fmt.Sprintf("terminationGracePeriodSeconds: %d", p.delayShutdown))
		args = fmt.Sprintf("[netexec, --http-port=8080, --delay-shutdown=%d]", p.delayShutdown)
	}
	return fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata: {name: %s, labels: {app: %s}}
spec:
  %s
  %s
  containers:
  - name: netexec
    image: %s
    imagePullPolicy: %s
    args: %s
    ports: [{containerPort: 8080}]
    readinessProbe: {httpGet: {path: /hostname, port: 8080}, periodSeconds: 1}
`, p.name, p.app, tolerateAll, strings.Join(extra, "\n  "), s.opts.Image, s.opts.PullPolicy, args)
}

// podsOf reads the workspace's pods labelled app=<app>, want of them.
func podsOf(ctx context.Context, ws kit.Workspace, app string, want int) []string {
	GinkgoHelper()
	pods, err := ws.Pods(ctx, app)
	Expect(err).NotTo(HaveOccurred())
	Expect(pods).To(HaveLen(want), "pods app=%s", app)
	return podNames(pods)
}
