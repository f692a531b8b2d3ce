package trace_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/netns/trace"
)

// nodePortLab creates clusters/nodeport.yaml under a unique name with the
// given CNI and proxy mode, applies seed 004's httpserver (one pod on
// HOSTB behind NodePort 30000), and deletes it all at the end.
func nodePortLab(t *testing.T, cni topology.CNI, mode string) *netns.Lab {
	t.Helper()
	data, err := os.ReadFile("../../../clusters/nodeport.yaml")
	if err != nil {
		t.Fatal(err)
	}
	name := roottest.UniqueName("trace")
	text := strings.Replace(string(data), "name: nodeport", "name: "+name, 1)
	text = regexp.MustCompile(`(?m)^  cni: .*$`).ReplaceAllString(text, "  cni: "+string(cni))
	text = regexp.MustCompile(`(?m)^    mode: .*$`).ReplaceAllString(text, "    mode: "+mode)
	file := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// A bound, not a wait: in the VM under TCG on a loaded host a new
	// lab's first sync has taken minutes (netns.DefaultTimeout says why).
	opts := netns.Options{Binary: roottest.SharedBinary(t), Timeout: 5 * time.Minute}
	l, _, err := netns.Create(context.Background(), file, opts)
	t.Cleanup(func() {
		if err := netns.Delete(name); err != nil {
			t.Errorf("delete lab %s: %v", name, err)
		}
		if ns, _ := network.Namespaces(name); len(ns) > 0 {
			t.Errorf("lab %s left namespaces %v", name, ns)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Apply(context.Background(), "../../../clusters/workloads/httpserver.yaml", opts); err != nil {
		t.Fatal(err)
	}
	return l
}

// podIP is the IP of the lab's httpserver pod.
func podIP(t *testing.T, l *netns.Lab) (string, netip.Addr) {
	t.Helper()
	objs, _, err := l.Store.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range objs.Pods {
		if strings.HasPrefix(p.Name, "httpserver-") {
			return p.Name, netip.MustParseAddr(p.Status.PodIP)
		}
	}
	t.Fatal("no httpserver pod")
	return "", netip.Addr{}
}

// checkNodePortTrace is the acceptance of issue 12's trace: the client
// opens HOSTA's NodePort 30000, served by the pod on HOSTB; the trace
// names the endpoint conntrack confirms (a KUBE-SEP chain in iptables
// mode, the real server in IPVS mode), the masquerade address (HOSTA's
// VTEP address), and the VXLAN hop HOSTA → HOSTB.
func checkNodePortTrace(t *testing.T, l *netns.Lab, mode string) {
	pod, ip := podIP(t, l)
	r, err := trace.Trace(context.Background(), l, "client", netip.MustParseAddrPort("192.168.16.73:30000"), trace.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := trace.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	t.Logf("trace:\n%s", text.String())
	s := r.Summary
	if r.Error != "" || r.Answer != pod || s.Reached != pod {
		t.Errorf("answer %q (error %q), reached %q; want the pod %s", r.Answer, r.Error, s.Reached, pod)
	}
	if s.Endpoint != netip.AddrPortFrom(ip, 3000) {
		t.Errorf("conntrack's endpoint %s, want %s:3000", s.Endpoint, ip)
	}
	if mode == "ipvs" {
		if s.RealServer != netip.AddrPortFrom(ip, 3000).String() {
			t.Errorf("IPVS real server %q, want %s:3000", s.RealServer, ip)
		}
	} else {
		if !strings.HasPrefix(s.ConfirmedSEP, "KUBE-SEP-") || len(s.EndpointChains) == 0 {
			t.Errorf("confirmed SEP %q (matched %v), want the KUBE-SEP chain conntrack confirms", s.ConfirmedSEP, s.EndpointChains)
		}
		if !hasPrefix(s.ServiceChains, "KUBE-EXT-") || !hasPrefix(s.ServiceChains, "KUBE-SVC-") {
			t.Errorf("service chains %v, want KUBE-EXT- and KUBE-SVC-", s.ServiceChains)
		}
	}
	if s.Masquerade != netip.MustParseAddr("10.100.40.0") || s.MasqueradeOn != "hosta" {
		t.Errorf("masquerade %s on %s, want HOSTA's VTEP address 10.100.40.0 on hosta", s.Masquerade, s.MasqueradeOn)
	}
	if len(s.VXLAN) != 1 || s.VXLAN[0].From != "hosta" || s.VXLAN[0].To != "hostb" ||
		s.VXLAN[0].Remote != netip.MustParseAddr("192.168.16.139") || s.VXLAN[0].PeerVTEP != netip.MustParseAddr("10.100.81.0") {
		t.Errorf("VXLAN hops %+v, want hosta → hostb, VTEP 10.100.81.0, underlay 192.168.16.139", s.VXLAN)
	}
	if err := trace.SaveLast(l.Store, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(l.Store.Path(labstore.LastTraceJSON))
	var back trace.Result
	if err != nil || json.Unmarshal(data, &back) != nil || back.Summary.Endpoint != s.Endpoint {
		t.Errorf("last-trace.json: %v, endpoint %s", err, back.Summary.Endpoint)
	}
	if svg, err := os.ReadFile(l.Store.Path(labstore.LastTraceSVG)); err != nil || !strings.Contains(string(svg), "<svg") {
		t.Errorf("last-trace.svg: %v", err)
	}
}

func hasPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// TestIntegrationTraceNodePort traces the cross-node NodePort with each CNI.
func TestIntegrationTraceNodePort(t *testing.T) {
	roottest.Require(t, "creates labs of network namespaces")
	for _, cni := range topology.CNIs() {
		t.Run(string(cni), func(t *testing.T) {
			checkNodePortTrace(t, nodePortLab(t, cni, "iptables"), "iptables")
		})
	}
}

// TestIntegrationTraceNodePortIPVS is the same in IPVS mode (in svclab's
// VM when this kernel has no IPVS: TestTraceIPVSInVM).
func TestIntegrationTraceNodePortIPVS(t *testing.T) {
	roottest.Require(t, "creates labs of network namespaces")
	roottest.RequireIPVS(t)
	checkNodePortTrace(t, nodePortLab(t, topology.CNICanal, "ipvs"), "ipvs")
}
