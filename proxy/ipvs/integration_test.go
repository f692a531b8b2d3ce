package ipvs

import (
	"io"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	libipvs "github.com/moby/ipvs"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/model"
)

// The node address of the test namespace (on its loopback device, which
// NodeAddresses counts because the address is not a loopback one).
const itNodeIP = "192.168.50.10"

// newTestNetns creates an empty network namespace ipvstest-<random> with
// lo up and itNodeIP on it, and deletes it when the test ends. Nothing
// here touches the host's own namespace.
func newTestNetns(t *testing.T) string {
	t.Helper()
	name := roottest.Netns(t, "ipvstest")
	h := nlHandle(t, name)
	lo, err := h.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddrAdd(lo, &netlink.Addr{IPNet: &net.IPNet{IP: net.ParseIP(itNodeIP), Mask: net.CIDRMask(24, 32)}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func nlHandle(t *testing.T, ns string) *netlink.Handle {
	t.Helper()
	nsh, err := netns.GetFromPath(filepath.Join("/run/netns", ns))
	if err != nil {
		t.Fatal(err)
	}
	defer nsh.Close()
	h, err := netlink.NewHandleAt(nsh, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func openKernel(t *testing.T, ns string) *kernel.Netlink {
	t.Helper()
	k, err := kernel.Open(ns)
	if err != nil {
		t.Fatalf("kernel.Open(%s): %v", ns, err)
	}
	t.Cleanup(k.Close)
	return k
}

func execRunner(t *testing.T, b iptkernel.Backend, ns string) *iptkernel.ExecRunner {
	t.Helper()
	r, err := iptkernel.NewExecRunner(iptkernel.ExecOptions{Backend: b, NetNS: ns})
	if err != nil {
		t.Fatalf("iptables %q backend unusable (install the iptables package): %v", b, err)
	}
	return r
}

func itSettings(r iptkernel.Runner) Settings {
	s := baseSettings()
	s.NodeAddresses = []netip.Addr{addr(itNodeIP)}
	s.NodeIP = addr(itNodeIP)
	s.RandomFully = r.HasRandomFully()
	return s
}

func addrFrom(ip net.IP) netip.Addr {
	a, _ := netip.AddrFromSlice(ip)
	return a.Unmap()
}

// itSnapshot has a ClusterIP service over UDP and TCP, a NodePort one with
// externalTrafficPolicy Local and a load balancer with source ranges: every
// set and rule kind but KUBE-IPVS-OUT-FILTER's (-m ipvs).
func itSnapshot(webEndpoints ...string) *model.Snapshot {
	tcp := corev1.ProtocolTCP
	return snapshot(append(kubeDNS(),
		sp("default", "web", "http", tcp, "10.96.0.20", 80, nodePort(30080), etpLocal, eps(webEndpoints...)),
		sp("default", "lb", "", tcp, "10.96.0.21", 443, nodePort(30443), loadBalancer("198.51.100.7", 32001, "192.168.50.0/24"), eps("10.244.1.30:8443")),
	)...)
}

// readSets reads the mode's sets of both families (KUBE-* and KUBE-6-*)
// as an Actual would hold them.
func readSets(t *testing.T, k kernel.IPSets) map[string]ActualSet {
	t.Helper()
	out := map[string]ActualSet{}
	for _, s := range append(slices.Clone(Sets), setsOf(corev1.IPv6Protocol)...) {
		typ, entries, exists, err := k.Entries(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if exists {
			out[s.Name] = ActualSet{Type: typ, Entries: entries}
		}
	}
	return out
}

func checkSets(t *testing.T, k kernel.IPSets, d *Desired) {
	t.Helper()
	got := readSets(t, k)
	for _, s := range d.Sets {
		g, ok := got[s.Name]
		if !ok {
			t.Errorf("ipset %s missing", s.Name)
			continue
		}
		if g.Type != s.Type || !slices.Equal(g.Entries, s.Entries) {
			t.Errorf("ipset %s: kernel has %s %q, want %s %q", s.Name, g.Type, g.Entries, s.Type, s.Entries)
		}
	}
}

// ipsetCLI cross-checks a set with the ipset command when it is installed.
func ipsetCLI(t *testing.T, ns, set string) (members []string, ok bool) {
	t.Helper()
	if _, err := exec.LookPath("ipset"); err != nil {
		return nil, false
	}
	out, err := exec.Command("ip", "netns", "exec", ns, "ipset", "list", set).CombinedOutput()
	if err != nil {
		t.Fatalf("ipset list %s: %v: %s", set, err, out)
	}
	_, after, _ := strings.Cut(string(out), "Members:\n")
	for _, l := range strings.Split(after, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			members = append(members, l)
		}
	}
	slices.Sort(members)
	return members, true
}

func saveAll(t *testing.T, r iptkernel.Runner) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"nat", "filter"} {
		out, err := r.Save(table)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
	}
	return b.String()
}

// onlyKinds keeps the ops a kernel without IPVS and dummy devices can run.
func onlyKinds(p Plan, kinds ...OpKind) Plan {
	var out Plan
	for _, o := range p {
		if slices.Contains(kinds, o.Kind) {
			out = append(out, o)
		}
	}
	return out
}

// TestIntegrationIPSetsAndIPTables applies the ipsets and the iptables
// payload of a desired state in a fresh namespace, reads them back,
// applies a changed state, and cleans up. It needs no IPVS, so it runs on
// any kernel with ipset support.
func TestIntegrationIPSetsAndIPTables(t *testing.T) {
	roottest.Require(t, "creates network namespaces and writes ipsets and iptables rules in them")
	for _, backend := range []iptkernel.Backend{iptkernel.BackendLegacy, iptkernel.BackendNFT} {
		t.Run(string(backend), func(t *testing.T) {
			ns := newTestNetns(t)
			k, ipt := openKernel(t, ns), execRunner(t, backend, ns)
			s := itSettings(ipt)
			setKinds := []OpKind{OpCreateSet, OpAddEntry, OpDelEntry, OpEnsureJump, OpRestore}

			d1 := Compute(itSnapshot("local:10.244.0.8:8080", "10.244.1.9:8080"), s)
			plan := onlyKinds(Diff(d1, &Actual{Sets: map[string]ActualSet{}}, DiffOptions{}), setKinds...)
			if _, err := Apply(k, ipt, plan); err != nil {
				t.Fatalf("Apply:\n%s\n%v", plan, err)
			}
			checkSets(t, k, d1)
			if got, ok := ipsetCLI(t, ns, SetLoopBack); ok && !slices.Equal(got, d1.Set(SetLoopBack).Entries) {
				t.Errorf("ipset list %s: %q, want %q", SetLoopBack, got, d1.Set(SetLoopBack).Entries)
			}
			saved := saveAll(t, ipt)
			for _, want := range []string{
				// As iptables-save prints them: "! -s" moves to the front,
				// REJECT shows its default.
				`-A KUBE-SERVICES ! -s 10.244.0.0/16 -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ`,
				`-A KUBE-NODE-PORT -p tcp -m comment --comment "Kubernetes nodeport TCP port with externalTrafficPolicy=local" -m set --match-set KUBE-NODE-PORT-LOCAL-TCP dst -j RETURN`,
				`-A KUBE-POSTROUTING -m comment --comment "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose" -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE`,
				`-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
				`-A INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER`,
				`-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT --reject-with icmp-port-unreachable`,
			} {
				if !strings.Contains(saved, want+"\n") {
					t.Errorf("iptables-save lacks\n  %s\nhave:\n%s", want, saved)
				}
			}

			// A changed state touches only the members that changed.
			d2 := Compute(itSnapshot("10.244.1.9:8080"), s)
			a := &Actual{DummyExists: true, Sets: readSets(t, k)}
			plan = onlyKinds(Diff(d2, a, DiffOptions{AppliedIPTables: d1.IPTables}), setKinds...)
			want := []string{"ipset del KUBE-LOOP-BACK 10.244.0.8,tcp:8080,10.244.0.8"}
			if got := planLines(plan); !slices.Equal(got, want) {
				t.Errorf("plan for one endpoint gone: %q, want %q", got, want)
			}
			if _, err := Apply(k, ipt, plan); err != nil {
				t.Fatal(err)
			}
			checkSets(t, k, d2)

			if err := Cleanup(k, ipt); err != nil {
				t.Fatalf("Cleanup: %v", err)
			}
			l, err := FindLeftovers(k, ipt)
			if err != nil || !l.Empty() {
				t.Errorf("after Cleanup: %v %v", l, err)
			}
			if saved := saveAll(t, ipt); strings.Contains(saved, "KUBE-") {
				t.Errorf("iptables after Cleanup:\n%s", saved)
			}
		})
	}
}

// TestIntegrationBitmapPortEntries checks the hand-built netlink requests
// for bitmap:port sets.
func TestIntegrationBitmapPortEntries(t *testing.T) {
	roottest.Require(t, "creates network namespaces and ipsets in them")
	k := openKernel(t, newTestNetns(t))
	if err := k.CreateSet(SetNodePortTCP, kernel.BitmapPort, ""); err != nil {
		t.Fatal(err)
	}
	if err := k.CreateSet(SetNodePortTCP, kernel.BitmapPort, ""); err != nil {
		t.Errorf("second create (-exist): %v", err)
	}
	if err := k.CreateSet(SetNodePortTCP, kernel.HashIP, kernel.Inet); err == nil || !strings.Contains(err.Error(), "exists with type bitmap:port") {
		t.Errorf("create with another type: %v", err)
	}
	for _, p := range []string{"30080", "0", "65535", "30080"} {
		if err := k.AddEntry(SetNodePortTCP, kernel.BitmapPort, p); err != nil {
			t.Errorf("add %s: %v", p, err)
		}
	}
	if err := k.DelEntry(SetNodePortTCP, kernel.BitmapPort, "0"); err != nil {
		t.Error(err)
	}
	if err := k.DelEntry(SetNodePortTCP, kernel.BitmapPort, "12345"); err != nil {
		t.Errorf("deleting a missing port: %v", err)
	}
	if err := k.AddEntry("NO-SUCH-SET", kernel.BitmapPort, "1"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("add to a missing set: %v", err)
	}
	_, entries, _, err := k.Entries(SetNodePortTCP)
	if err != nil || !slices.Equal(entries, []string{"30080", "65535"}) {
		t.Errorf("entries %q, %v", entries, err)
	}
	if err := k.DestroySet(SetNodePortTCP); err != nil {
		t.Error(err)
	}
	if err := k.DestroySet(SetNodePortTCP); err != nil {
		t.Errorf("destroying a missing set: %v", err)
	}
}

// ipvsadmSave lists the namespace's IPVS state through moby/ipvs directly
// (not through package kernel), in `ipvsadm -S -n` form, sorted.
func ipvsadmSave(t *testing.T, ns string) []string {
	t.Helper()
	h, err := libipvs.New(filepath.Join("/run/netns", ns))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	svcs, err := h.GetServices()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range svcs {
		vs := kernel.VirtualServer{Address: addrFrom(s.Address), Protocol: kernel.ProtocolFromNumber(uint8(s.Protocol)), Port: s.Port,
			Scheduler: s.SchedName, Flags: s.Flags &^ kernel.FlagHashed, Timeout: s.Timeout}
		out = append(out, vs.String())
		dsts, err := h.GetDestinations(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dsts {
			if d.ConnectionFlags&libipvs.ConnectionFlagFwdMask != libipvs.ConnectionFlagMasq {
				t.Errorf("%s: destination %s is not in NAT mode (flags %#x)", vs.Key(), d.Address, d.ConnectionFlags)
			}
			rs := kernel.RealServer{Address: addrFrom(d.Address), Port: d.Port, Weight: d.Weight}
			out = append(out, "-a "+vs.Target()+" "+rs.Describe())
		}
	}
	slices.Sort(out)
	return out
}

// desiredIPVS is what ipvsadmSave should list for the proxiers' desired
// states ds (one per family on a dual-stack node).
func desiredIPVS(ds ...*Desired) []string {
	var out []string
	for _, d := range ds {
		for _, vs := range d.VirtualServers {
			out = append(out, vs.VirtualServer.String())
			for _, rs := range vs.RealServers {
				out = append(out, "-a "+vs.Target()+" "+rs.Describe())
			}
		}
	}
	slices.Sort(out)
	return out
}

func checkKernelState(t *testing.T, ns string, k *kernel.Netlink, ipt iptkernel.Runner, d *Desired) {
	t.Helper()
	checkIPVSState(t, ns, k, d)
	saved := saveAll(t, ipt)
	if !strings.Contains(saved, "--match-set KUBE-CLUSTER-IP dst,dst") {
		t.Errorf("iptables-save lacks the KUBE-CLUSTER-IP rules:\n%s", saved)
	}
}

// checkIPVSState checks the kernel's IPVS services, ipsets and kube-ipvs0
// against ds, the desired states of the node's proxiers (one per family)
// (checkKernelState without iptables, which execs).
func checkIPVSState(t *testing.T, ns string, k *kernel.Netlink, ds ...*Desired) {
	t.Helper()
	if got, want := ipvsadmSave(t, ns), desiredIPVS(ds...); !slices.Equal(got, want) {
		t.Errorf("IPVS state:\n  got  %q\n  want %q", got, want)
	}
	for _, d := range ds {
		checkSets(t, k, d)
	}
	h := nlHandle(t, ns)
	dummy, err := h.LinkByName(DummyDevice)
	if err != nil {
		t.Fatalf("%s: %v", DummyDevice, err)
	}
	if dummy.Type() != "dummy" || dummy.Attrs().Flags&net.FlagUp != 0 {
		t.Errorf("%s: type %s, flags %v; want a dummy device left down", DummyDevice, dummy.Type(), dummy.Attrs().Flags)
	}
	addrs, err := h.AddrList(dummy, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range addrs {
		if !a.IP.IsLinkLocalUnicast() {
			got = append(got, a.IPNet.String())
		}
	}
	slices.Sort(got)
	var want []string
	for _, d := range ds {
		for _, a := range d.Addresses {
			want = append(want, hostPrefix(a))
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s addresses %q, want %q", DummyDevice, got, want)
	}
}

// TestIntegrationSync drives the Backend against a real kernel in a fresh
// namespace: the first sync builds everything, an unchanged sync touches
// nothing, a changed one only the difference, and Cleanup leaves nothing.
func TestIntegrationSync(t *testing.T) {
	roottest.Require(t, "creates network namespaces and programs IPVS, ipsets, addresses and iptables in them")
	roottest.RequireIPVS(t)
	ns := newTestNetns(t)
	k, ipt := openKernel(t, ns), execRunner(t, iptkernel.BackendHost, ns)
	b, err := New(k, ipt, Options{ClusterCIDR: prefix(clusterPod), MasqueradeBit: 14, StrictARP: true,
		Timeouts: kernel.Timeouts{TCP: 900e9, TCPFin: 60e9, UDP: 120e9}}, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Logf("Describe: %s", b.Describe())
	for key, want := range map[string]string{
		sysctlVSConnTrack: "1", sysctlExpireNoDestConn: "1", sysctlExpireQuiescentTemplate: "1", sysctlForward: "1",
		sysctlArpIgnore: "1", sysctlArpAnnounce: "2",
	} {
		if got, err := k.Sysctl(key); err != nil || got != want {
			t.Errorf("sysctl %s = %q (%v), want %q", key, got, err, want)
		}
	}
	if to, err := k.Timeouts(); err != nil || to != (kernel.Timeouts{TCP: 900e9, TCPFin: 60e9, UDP: 120e9}) {
		t.Errorf("IPVS timeouts %+v (%v)", to, err)
	}

	snap1 := itSnapshot("local:10.244.0.8:8080", "10.244.1.9:8080")
	res, err := b.Sync(snap1)
	if err != nil {
		t.Fatalf("first Sync: %v\n%s", err, res.Plan)
	}
	d1, _ := b.Desired(snap1)
	checkKernelState(t, ns, k, ipt, d1)

	res, err = b.Sync(snap1)
	if err != nil || res.Ops != 0 || res.Bytes != 0 {
		t.Errorf("unchanged Sync: %d ops, %d bytes, %v\n%s", res.Ops, res.Bytes, err, res.Plan)
	}

	// One web endpoint goes (it has no connections: deleted at once) and
	// the load balancer service goes.
	tcp := corev1.ProtocolTCP
	snap2 := snapshot(append(kubeDNS(), sp("default", "web", "http", tcp, "10.96.0.20", 80, nodePort(30080), etpLocal, eps("10.244.1.9:8080")))...)
	res, err = b.Sync(snap2)
	if err != nil {
		t.Fatalf("second Sync: %v\n%s", err, res.Plan)
	}
	for _, want := range []string{
		"ipvsadm -d -t 10.96.0.20:80 -r 10.244.0.8:8080",
		"ipset del KUBE-LOOP-BACK 10.244.0.8,tcp:8080,10.244.0.8",
		"ip addr del 198.51.100.7/32 dev kube-ipvs0",
		"ipvsadm -D -t 198.51.100.7:443",
	} {
		if !slices.Contains(planLines(res.Plan), want) {
			t.Errorf("second sync lacks %q:\n%s", want, res.Plan)
		}
	}
	// With its only local endpoint gone, the externalTrafficPolicy Local
	// node port falls back to the cluster endpoints (#97081): that is the
	// only addition.
	adds := onlyKinds(res.Plan, OpAddVirtualServer, OpAddRealServer)
	if got, want := planLines(adds), []string{"ipvsadm -a -t 192.168.50.10:30080 -r 10.244.1.9:8080 -m -w 1"}; !slices.Equal(got, want) {
		t.Errorf("second sync added %q, want only %q", got, want)
	}
	d2, _ := b.Desired(snap2)
	checkKernelState(t, ns, k, ipt, d2)

	if err := Cleanup(k, ipt); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	l, err := FindLeftovers(k, ipt)
	if err != nil || !l.Empty() {
		t.Errorf("after Cleanup: %v %v", l, err)
	}
	if got := ipvsadmSave(t, ns); len(got) != 0 {
		t.Errorf("IPVS after Cleanup: %q", got)
	}
}

// TestIntegrationSchedulerProbe checks that schedulers are probed in the
// kernel and a missing one is named.
func TestIntegrationSchedulerProbe(t *testing.T) {
	roottest.Require(t, "creates network namespaces and IPVS services in them")
	roottest.RequireIPVS(t)
	k := openKernel(t, newTestNetns(t))
	for _, s := range []string{"rr", "wlc", "sh", "mh"} {
		if err := CheckScheduler(k, s); err != nil {
			t.Errorf("scheduler %s: %v", s, err)
		}
	}
	err := CheckScheduler(k, "foo")
	if want := `ipvs.scheduler "foo": the kernel has no IPVS scheduler foo (module ip_vs_foo)`; err == nil || err.Error() != want {
		t.Errorf("scheduler foo: %v, want %q", err, want)
	}
	if vss, err := k.VirtualServers(); err != nil || len(vss) != 0 {
		t.Errorf("probe services left behind: %v %v", vss, err)
	}
}

// TestIntegrationGracefulTermination drains a real server that has a live
// TCP connection: weight 0 first, deleted by the sync after the connection
// is gone.
func TestIntegrationGracefulTermination(t *testing.T) {
	roottest.Require(t, "creates network namespaces and sends traffic through IPVS in them")
	roottest.RequireIPVS(t)
	ns := newTestNetns(t)
	k, ipt := openKernel(t, ns), execRunner(t, iptkernel.BackendHost, ns)
	b, err := New(k, ipt, Options{ClusterCIDR: prefix(clusterPod), MasqueradeBit: 14}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGracefulTermination(t, ns, k, b, addr(itNodeIP), addr("10.96.0.50"))
}

// checkGracefulTermination is TestIntegrationGracefulTermination's
// sequence for the proxier b of namespace ns: a service at clusterIP with
// two endpoints on nodeIP (ports 8080 and 8081), one connection through
// it, the connected endpoint removed (drained at weight 0), the
// connection reset, and the endpoint deleted by the next sync.
func checkGracefulTermination(t *testing.T, ns string, k *kernel.Netlink, b *Backend, nodeIP, clusterIP netip.Addr) {
	t.Helper()
	var err error
	endpoints := []string{netip.AddrPortFrom(nodeIP, 8080).String(), netip.AddrPortFrom(nodeIP, 8081).String()}
	for _, ep := range endpoints {
		var ln net.Listener
		roottest.InNetns(t, ns, func() (err error) { ln, err = net.Listen("tcp", ep); return err })
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
			}
		}()
	}
	debug := func() {
		for _, cmd := range [][]string{{"ipvsadm", "-Ln", "--stats"}, {"ipvsadm", "-Lnc"}, {iptablesCommand(b.settings.Family) + "-save", "-c"}, {"ip", ipCommandFlag(b.settings.Family), "addr"}} {
			out, _ := exec.Command("ip", append([]string{"netns", "exec", ns}, cmd...)...).CombinedOutput()
			t.Logf("%s:\n%s", strings.Join(cmd, " "), out)
		}
	}
	tcp := corev1.ProtocolTCP
	svc := func(eps_ ...string) *model.Snapshot {
		snap := snapshot(sp("default", "web", "", tcp, clusterIP.String(), 80, eps(eps_...)))
		snap.Family = b.Family()
		return snap
	}
	if _, err := b.Sync(svc(endpoints...)); err != nil {
		t.Fatal(err)
	}
	var conn net.Conn
	roottest.InNetns(t, ns, func() error { // err is reported below, after debug
		d := net.Dialer{Timeout: 10 * time.Second}
		conn, err = d.Dial("tcp", netip.AddrPortFrom(clusterIP, 80).String())
		return nil
	})
	if err != nil {
		debug()
		t.Fatalf("connecting through IPVS: %v", err)
	}
	vs := kernel.VirtualServer{Address: clusterIP, Protocol: kernel.TCP, Port: 80}
	conns := func(ep string) (n, weight int) {
		rss, err := k.RealServers(vs)
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range rss {
			if rs.Key() == ep {
				return rs.ActiveConn + rs.InactiveConn, rs.Weight
			}
		}
		return -1, -1
	}
	busy, idle := endpoints[0], endpoints[1]
	if n, _ := conns(busy); n < 1 {
		busy, idle = idle, busy
	}
	if n, _ := conns(busy); n < 1 {
		debug()
		t.Fatalf("the connection is counted on no real server")
	}

	res, err := b.Sync(svc(idle))
	if err != nil {
		t.Fatal(err)
	}
	target := vs.Target()
	want := "ipvsadm -e " + target + " -r " + busy + " -m -w 0  # draining: 1 active, 0 inactive connections"
	if got := planLines(res.Plan); !slices.Equal(got, []string{want}) {
		t.Errorf("plan %q, want %q", got, want)
	}
	if n, w := conns(busy); n < 1 || w != 0 {
		t.Errorf("draining real server: %d connections, weight %d; want it kept at weight 0", n, w)
	}
	if res, err := b.Sync(svc(idle)); err != nil || len(res.Plan) != 0 {
		t.Errorf("sync while draining: %v\n%s", err, res.Plan)
	}

	// Reset the connection (RST: IPVS's CLOSE state, expiring in 10s
	// rather than TIME_WAIT's 2 minutes) and wait for IPVS to forget it.
	_ = conn.(*net.TCPConn).SetLinger(0)
	conn.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, _ := conns(busy)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			debug()
			t.Fatalf("IPVS still counts %d connections a minute after the reset", n)
		}
		time.Sleep(time.Second)
	}
	res, err = b.Sync(svc(idle))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := planLines(res.Plan), []string{"ipvsadm -d " + target + " -r " + busy}; !slices.Equal(got, want) {
		t.Errorf("sync after the drain: %q, want %q", got, want)
	}
	if n, _ := conns(busy); n != -1 {
		t.Errorf("the drained real server is still there")
	}
}
