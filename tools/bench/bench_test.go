package bench

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/netns/workload"
	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/tools/bench/report"
)

func TestParseModes(t *testing.T) {
	got, err := ParseModes("nftables, iptables,nftables,ipvs")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range got {
		names = append(names, m.Name)
	}
	if want := []string{"nftables", "iptables", "ipvs"}; !slices.Equal(names, want) {
		t.Errorf("modes %v, want %v", names, want)
	}
	if got[1].Backend != topology.BackendDefault || got[1].ProxyMode != "iptables" {
		t.Errorf("iptables is %+v, want the lab's default backend in iptables mode", got[1])
	}
	_, err = ParseModes("iptables,userspace")
	if want := `--modes: "userspace": unknown mode (want iptables, iptables-legacy, iptables-nft, nftables, ipvs)`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestParseServiceCounts(t *testing.T) {
	got, err := ParseServiceCounts("2000, 100,2000")
	if err != nil || !slices.Equal(got, []int{100, 2000}) {
		t.Errorf("got %v, %v; want [100 2000]", got, err)
	}
	for _, bad := range []string{"", "0", "-1", "x", "50001", "100,,200"} {
		if _, err := ParseServiceCounts(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseStat(t *testing.T) {
	// A command name with a space and a parenthesis, as the kernel prints it.
	line := "4242 (svc lab) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 123 45 6 7 20 0 9 0 100 0 0"
	got, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if got.self != 168 || got.children != 13 {
		t.Errorf("got %+v, want self 123+45, children 6+7", got)
	}
	cpu := cpuTimes{self: 268, children: 113}.since(got)
	if cpu != (report.CPU{ProxySeconds: 1, ChildrenSeconds: 1}) {
		t.Errorf("since = %+v, want 1s and 1s", cpu)
	}
	if _, err := parseStat("1 (x) S 1 2"); err == nil {
		t.Error("a short line: no error")
	}
}

func TestServiceIPs(t *testing.T) {
	for i, want := range map[int]string{0: "10.96.16.0", 255: "10.96.16.255", 256: "10.96.17.0", MaxServices - 1: "10.96.211.79"} {
		if got := serviceIP(i); got != netip.MustParseAddr(want) {
			t.Errorf("serviceIP(%d) = %s, want %s", i, got, want)
		}
	}
	if sub := netip.MustParsePrefix(serviceSubnet); !sub.Contains(serviceIP(MaxServices - 1)) {
		t.Error("the last Service's IP is outside the service subnet")
	}
}

// TestGeneratedObjectsApply decodes 2500 Services (three parts) and
// applies them with the pods on the lab's in-memory state: every Service
// gets its IP and an EndpointSlice with both servers.
func TestGeneratedObjectsApply(t *testing.T) {
	const n = 2500
	pods, err := workload.Decode([]byte(podsYAML()), "pods")
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := decodeServices(n)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := topology.Parse([]byte(topologyYAML("dpbench-test", Modes[0])), "lab")
	if err != nil {
		t.Fatal(err)
	}
	c := workload.Cluster{ServiceSubnet: lab.Spec.ServiceSubnet}
	for _, node := range lab.Spec.Nodes {
		c.Nodes = append(c.Nodes, workload.Node{Name: node.Name, PodCIDR: node.PodCIDR})
	}
	st, err := c.Apply(&labstore.State{}, pods, "pods")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	st, err = c.Apply(st, svcs, "services")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("applied %d Services in %s", n, time.Since(start))
	if len(st.Services) != n {
		t.Fatalf("%d Services, want %d", len(st.Services), n)
	}
	last := st.Service(namespace, serviceName(n-1))
	if last == nil || last.Spec.ClusterIP != serviceIP(n-1).String() {
		t.Fatalf("last Service %v, want cluster IP %s", last, serviceIP(n-1))
	}
	endpoints := 0
	for _, s := range st.EndpointSlices {
		if s.Labels["kubernetes.io/service-name"] == serviceName(n-1) {
			endpoints += len(s.Endpoints)
		}
	}
	if endpoints != serverReplicas {
		t.Errorf("the last Service has %d endpoints, want %d", endpoints, serverReplicas)
	}
}

// TestConfigMapWithMode switches the lab's ConfigMap to nftables: it
// decodes as a manifest and the proxy's parser reads mode nftables with
// the lab's 100ms least sync period.
func TestConfigMapWithMode(t *testing.T) {
	conf := "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: \"\"\niptables:\n  minSyncPeriod: 100ms\n"
	manifest, err := configMapWithMode(conf, "nftables")
	if err != nil {
		t.Fatal(err)
	}
	m, err := workload.Decode([]byte(manifest), "cm")
	if err != nil {
		t.Fatalf("%v\n%s", err, manifest)
	}
	cfg, err := config.Parse("cm", []byte(m.ConfigMaps[0].Data["config.conf"]))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != config.ModeNFTables || cfg.MinSyncPeriod != 100*time.Millisecond {
		t.Errorf("mode %q, minSyncPeriod %s; want nftables, 100ms", cfg.Mode, cfg.MinSyncPeriod)
	}
	if _, err := configMapWithMode("kind: KubeProxyConfiguration\n", "nftables"); err == nil {
		t.Error("a config without a mode field: no error")
	}
}

func TestNotesSayWhatDominates(t *testing.T) {
	prog := report.Programming{StoreMs: 10, ProxyMs: 90, KernelObjects: 800}
	cpu := report.CPU{ProxySeconds: 0.1, ChildrenSeconds: 0.3}
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"iptables-legacy", []string{"iptables-legacy-restore (the whole nat table rewritten in the kernel) of 800 nat rules", "rule 100 of 100", "children"}},
		{"nftables", []string{"one nft transaction (800 nat rules)", "service-ips verdict map"}},
		{"ipvs", []string{"IPVS over netlink", "IPVS hash lookup"}},
	} {
		m, _ := lookupMode(tc.mode)
		got := strings.Join(notes(m, 100, prog, "nat rules", cpu), "; ")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: notes %q lack %q", tc.mode, got, w)
			}
		}
		if strings.Contains(got, "lab's apply") {
			t.Errorf("%s: notes blame the lab's apply, which took 10 of 100 ms", tc.mode)
		}
	}
	if got := fmt.Sprint(notes(Modes[0], 5, report.Programming{StoreMs: 90, ProxyMs: 10}, "x", report.CPU{})); !strings.Contains(got, "lab's apply") {
		t.Errorf("notes %s do not say the lab's apply dominates", got)
	}
}
