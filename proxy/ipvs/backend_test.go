package ipvs

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel/kerneltest"
	"github.com/svclab/svclab/proxy/model"
)

// newTestBackend is a Backend over a fake kernel with node addresses
// 192.168.0.10 and 10.0.2.15, and a fake iptables.
func newTestBackend(t *testing.T, opts Options) (*Backend, *kerneltest.Fake, *fakeIPTables) {
	t.Helper()
	k := kerneltest.New(nodeIP.String(), nodeIP2.String())
	ipt := newFakeIPTables()
	if !opts.ClusterCIDR.IsValid() {
		opts.ClusterCIDR = prefix(clusterPod)
	}
	if opts.KernelRelease == "" {
		opts.KernelRelease = "6.1.0-18-amd64"
	}
	b, err := New(k, ipt, opts, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	k.ResetCalls()
	k.TakeCounts()
	return b, k, ipt
}

func mustSync(t *testing.T, b *Backend, snap *model.Snapshot) SyncResult {
	t.Helper()
	res, err := b.Sync(snap)
	if err != nil {
		t.Fatalf("Sync: %v\nplan:\n%s", err, res.Plan)
	}
	return res
}

func checkCalls(t *testing.T, k *kerneltest.Fake, want ...string) {
	t.Helper()
	got := k.TakeCalls()
	if !slices.Equal(got, want) {
		t.Errorf("kernel calls:\n  got  %q\n  want %q", got, want)
	}
}

func TestNewSetsUpTheKernelLikeUpstream(t *testing.T) {
	k := kerneltest.New(nodeIP.String())
	_, err := New(k, newFakeIPTables(), Options{StrictARP: true, KernelRelease: "6.1.0-18-amd64",
		Timeouts: kernel.Timeouts{TCP: 900e9, UDP: 30e9}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ipvsadm -A -t 198.51.100.0:20000 -s rr", // the scheduler probe...
		"ipvsadm -D -t 198.51.100.0:20000",       // ...removed again
		"sysctl -w net.ipv4.vs.conntrack=1",
		"sysctl -w net.ipv4.vs.expire_nodest_conn=1",
		"sysctl -w net.ipv4.vs.expire_quiescent_template=1",
		"sysctl -w net.ipv4.ip_forward=1",
		"sysctl -w net.ipv4.conf.all.arp_ignore=1",
		"sysctl -w net.ipv4.conf.all.arp_announce=2",
		"ipvsadm --set 900 0 30",
	}
	checkCalls(t, k, want...)
}

func TestNewSetsConnReuseModeOnOldKernels(t *testing.T) {
	k := kerneltest.New(nodeIP.String())
	if _, err := New(k, newFakeIPTables(), Options{KernelRelease: "5.4.0-150-generic"}, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(k.Calls, "sysctl -w net.ipv4.vs.conn_reuse_mode=0") {
		t.Errorf("kernel 5.4: conn_reuse_mode not set to 0; calls %q", k.Calls)
	}
}

func TestNewRejectsAMissingScheduler(t *testing.T) {
	k := kerneltest.New(nodeIP.String())
	_, err := New(k, newFakeIPTables(), Options{Scheduler: "foo"}, nil)
	want := `ipvs.scheduler "foo": the kernel has no IPVS scheduler foo (module ip_vs_foo)`
	if err == nil || err.Error() != want {
		t.Fatalf("New: %v, want %q", err, want)
	}
	if vss, _ := k.VirtualServers(); len(vss) != 0 {
		t.Errorf("the probe left virtual servers: %v", vss)
	}
}

func TestNewAcceptsEveryKernelScheduler(t *testing.T) {
	for _, s := range kerneltest.Schedulers {
		k := kerneltest.New(nodeIP.String())
		b, err := New(k, newFakeIPTables(), Options{Scheduler: s}, nil)
		if err != nil {
			t.Errorf("scheduler %s: %v", s, err)
			continue
		}
		if got, want := b.Describe(), "scheduler "+s+")"; !strings.HasSuffix(got, want) {
			t.Errorf("Describe() = %q, want it to end with %q", got, want)
		}
	}
}

func TestNewFailsClearlyWithoutIPVS(t *testing.T) {
	k := kerneltest.New(nodeIP.String())
	k.NoIPVS = true
	_, err := New(k, newFakeIPTables(), Options{}, nil)
	if !errors.Is(err, kernel.ErrNoIPVS) || !strings.Contains(err.Error(), "CONFIG_IP_VS") {
		t.Fatalf("New without IPVS: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	b, _, _ := newTestBackend(t, Options{})
	if got, want := b.Describe(), "IPVS (kernel 6.1.0-18-amd64, scheduler rr)"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	if b.Mode() != "ipvs" {
		t.Errorf("Mode() = %q", b.Mode())
	}
}

func TestFirstSyncBuildsTheWholeState(t *testing.T) {
	b, k, ipt := newTestBackend(t, Options{})
	res := mustSync(t, b, snapshot(kubeDNS()...))
	if !res.Full || res.ServicePorts != 2 || res.Endpoints != 4 || res.Bytes == 0 {
		t.Errorf("result %+v", res)
	}
	addrs, exists, _ := k.Addresses(DummyDevice)
	if !exists || !slices.Equal(addrs, []netip.Addr{addr("10.96.0.10")}) {
		t.Errorf("kube-ipvs0: exists %v, addresses %v", exists, addrs)
	}
	vss, _ := k.VirtualServers()
	if len(vss) != 2 {
		t.Fatalf("virtual servers %v", vss)
	}
	for _, vs := range vss {
		rss, _ := k.RealServers(vs)
		if len(rss) != 2 {
			t.Errorf("%s: real servers %v", vs.Key(), rss)
		}
	}
	sets, _ := k.ListSets()
	if len(sets) != len(Sets) {
		t.Errorf("ipsets: %d, want %d", len(sets), len(Sets))
	}
	_, entries, _, _ := k.Entries(SetClusterIP)
	if !slices.Equal(entries, []string{"10.96.0.10,tcp:53", "10.96.0.10,udp:53"}) {
		t.Errorf("KUBE-CLUSTER-IP: %v", entries)
	}
	if ipt.jumps != len(jumpRules) || len(ipt.restores) != 1 {
		t.Errorf("iptables: %d jumps ensured, %d restores; want %d and 1", ipt.jumps, len(ipt.restores), len(jumpRules))
	}
	if !slices.Contains(ipt.rules("nat"), "-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES") {
		t.Errorf("no jump from PREROUTING: %q", ipt.rules("nat"))
	}
}

func TestSyncTouchesOnlyWhatChanged(t *testing.T) {
	b, k, ipt := newTestBackend(t, Options{})
	dns := kubeDNS()
	mustSync(t, b, snapshot(dns...))
	k.ResetCalls()

	t.Run("nothing changed", func(t *testing.T) {
		res := mustSync(t, b, snapshot(kubeDNS()...))
		checkCalls(t, k)
		if res.Full || res.Bytes != 0 || len(ipt.restores) != 1 || len(res.Plan) != 0 {
			t.Errorf("unchanged sync: %+v, %d restores", res, len(ipt.restores))
		}
	})

	t.Run("one endpoint added", func(t *testing.T) {
		dns := kubeDNS()
		eps("10.244.2.3:53")(dns[0])
		mustSync(t, b, snapshot(dns...))
		checkCalls(t, k, "ipvsadm -a -u 10.96.0.10:53 -r 10.244.2.3:53 -m -w 1")
	})

	web := sp("default", "web", "http", corev1.ProtocolTCP, "10.96.0.20", 80, nodePort(30080), eps("10.244.1.9:8080"))
	t.Run("one service added", func(t *testing.T) {
		dns := kubeDNS()
		eps("10.244.2.3:53")(dns[0])
		res := mustSync(t, b, snapshot(append(dns, web)...))
		checkCalls(t, k,
			"ipvsadm -A -t 10.0.2.15:30080 -s rr",
			"ipvsadm -a -t 10.0.2.15:30080 -r 10.244.1.9:8080 -m -w 1",
			"ipvsadm -A -t 10.96.0.20:80 -s rr",
			"ipvsadm -a -t 10.96.0.20:80 -r 10.244.1.9:8080 -m -w 1",
			"ipvsadm -A -t 192.168.0.10:30080 -s rr",
			"ipvsadm -a -t 192.168.0.10:30080 -r 10.244.1.9:8080 -m -w 1",
			"ip addr add 10.96.0.20/32 dev kube-ipvs0",
			"ipset add KUBE-CLUSTER-IP 10.96.0.20,tcp:80",
			"ipset add KUBE-NODE-PORT-TCP 30080",
			"ipset add KUBE-IPVS-IPS 10.96.0.20",
		)
		// The first node port makes the KUBE-NODE-PORT-TCP rule appear.
		if res.Bytes == 0 || len(ipt.restores) != 2 {
			t.Errorf("iptables not rewritten for the new node port set rule: %+v", res)
		}
	})

	t.Run("service removed", func(t *testing.T) {
		// A whole virtual server goes at once, with its real servers, as
		// upstream's cleanLegacyService does.
		mustSync(t, b, snapshot(web))
		checkCalls(t, k,
			"ipset del KUBE-LOOP-BACK 10.244.0.5,tcp:53,10.244.0.5",
			"ipset del KUBE-LOOP-BACK 10.244.0.5,udp:53,10.244.0.5",
			"ipset del KUBE-CLUSTER-IP 10.96.0.10,tcp:53",
			"ipset del KUBE-CLUSTER-IP 10.96.0.10,udp:53",
			"ipset del KUBE-IPVS-IPS 10.96.0.10",
			"ip addr del 10.96.0.10/32 dev kube-ipvs0",
			"ipvsadm -D -t 10.96.0.10:53",
			"ipvsadm -D -u 10.96.0.10:53",
		)
	})
}
