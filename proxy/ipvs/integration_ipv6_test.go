package ipvs

import (
	"bufio"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/model"
)

// The IPv6 node address of the test namespace, next to itNodeIP on its
// loopback device (no duplicate address detection there).
const itNodeIP6 = "fd00:50::10"

// newDualStackTestNetns is newTestNetns with itNodeIP6 as well.
func newDualStackTestNetns(t *testing.T) string {
	t.Helper()
	ns := newTestNetns(t)
	h := nlHandle(t, ns)
	lo, err := h.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	a := &netlink.Addr{IPNet: &net.IPNet{IP: net.ParseIP(itNodeIP6), Mask: net.CIDRMask(64, 128)}, Flags: 0x02} // IFA_F_NODAD
	if err := h.AddrAdd(lo, a); err != nil {
		t.Fatalf("ip addr add %s/64 dev lo: %v", itNodeIP6, err)
	}
	return ns
}

// execRunner6 is execRunner for ip6tables.
func execRunner6(t *testing.T, ns string) *iptkernel.ExecRunner {
	t.Helper()
	r, err := iptkernel.NewExecRunner(iptkernel.ExecOptions{Backend: iptkernel.BackendHost, Family: corev1.IPv6Protocol, NetNS: ns})
	if err != nil {
		t.Fatalf("ip6tables unusable (install the iptables package): %v", err)
	}
	return r
}

// newIPv6IntegrationBackend is the IPv6 proxier over the real kernel of ns.
func newIPv6IntegrationBackend(t *testing.T, ns string, k *kernel.Netlink) (*Backend, *iptkernel.ExecRunner) {
	t.Helper()
	ipt := execRunner6(t, ns)
	b, err := New(k, ipt, Options{Family: corev1.IPv6Protocol, ClusterCIDR: prefix(clusterPod6), MasqueradeBit: 14}, nil)
	if err != nil {
		t.Fatalf("New (IPv6): %v", err)
	}
	return b, ipt
}

// itSnapshot6 is itSnapshot on IPv6: kube-dns over UDP and TCP, a
// NodePort service with externalTrafficPolicy Local and a load balancer
// with source ranges.
func itSnapshot6(webEndpoints ...string) *model.Snapshot {
	tcp := corev1.ProtocolTCP
	return snapshot6(append(kubeDNS6(),
		sp("default", "web", "http", tcp, "fd00:10:96::20", 80, nodePort(30080), etpLocal, eps(webEndpoints...)),
		sp("default", "lb", "", tcp, "fd00:10:96::21", 443, nodePort(30443), loadBalancer("2001:db8:100::7", 32001, "fd00:50::/64"), eps("[fd00:10:244:1::30]:8443")),
	)...)
}

// TestIntegrationIPv6Sync drives the IPv6 proxier against a real kernel:
// IPv6 virtual and real servers, /128s on kube-ipvs0, KUBE-6-* sets of
// family inet6 and the ip6tables rules are read back; an unchanged sync
// touches nothing; Cleanup with the ip6tables runner leaves nothing.
func TestIntegrationIPv6Sync(t *testing.T) {
	roottest.Require(t, "creates network namespaces and programs IPVS, ipsets, addresses and ip6tables in them")
	roottest.RequireIPVS(t)
	ns := newDualStackTestNetns(t)
	k := openKernel(t, ns)
	b, ipt := newIPv6IntegrationBackend(t, ns, k)

	snap := itSnapshot6("local:[fd00:10:244::8]:8080", "[fd00:10:244:1::9]:8080")
	res, err := b.Sync(snap)
	if err != nil {
		t.Fatalf("first Sync: %v\n%s", err, res.Plan)
	}
	d, err := b.Desired(snap)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(d.Addresses, addr("fd00:10:96::a")) || slices.ContainsFunc(d.VirtualServers, func(vs DesiredVirtualServer) bool { return vs.Address.Is4() }) {
		t.Fatalf("the IPv6 proxier's desired state is not IPv6:\n%s", d)
	}
	checkIPVSState(t, ns, k, d)
	if !slices.ContainsFunc(d.VirtualServers, func(vs DesiredVirtualServer) bool { return vs.Address == addr(itNodeIP6) && vs.Port == 30080 }) {
		t.Errorf("no node port virtual server on %s:\n%s", itNodeIP6, d)
	}
	if got, ok := ipsetCLI(t, ns, "KUBE-6-CLUSTER-IP"); ok && !slices.Equal(got, d.Set(SetClusterIP).Entries) {
		t.Errorf("ipset list KUBE-6-CLUSTER-IP: %q, want %q", got, d.Set(SetClusterIP).Entries)
	}
	saved := saveAll(t, ipt)
	for _, want := range []string{
		`-A KUBE-SERVICES -s ::1/128 -j RETURN`,
		`-A KUBE-SERVICES ! -s fd00:10:244::/56 -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-6-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ`,
		`-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
		`-A KUBE-SOURCE-RANGES-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port + source cidr for packet filter purpose" -m set --match-set KUBE-6-LOAD-BALANCER-SOURCE-CID dst,dst,src -j RETURN`,
	} {
		if !strings.Contains(saved, want+"\n") {
			t.Errorf("ip6tables-save lacks\n  %s\nhave:\n%s", want, saved)
		}
	}

	for _, full := range []bool{false, true} {
		if full {
			b.ForceFullSync()
		}
		res, err = b.Sync(snap)
		if err != nil || res.Plan.Count(OpEnsureJump)+res.Plan.Count(OpRestore) != res.Ops || res.Bytes != len(d.IPTables)*boolInt(full) {
			t.Errorf("unchanged Sync (full=%v): %d ops, %d bytes, %v\n%s", full, res.Ops, res.Bytes, err, res.Plan)
		}
	}

	if err := Cleanup(k, ipt); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	l, err := FindLeftovers(k, ipt)
	if err != nil || !l.Empty() {
		t.Errorf("after Cleanup: %v %v", l, err)
	}
	if saved := saveAll(t, ipt); strings.Contains(saved, "KUBE-") {
		t.Errorf("ip6tables after Cleanup:\n%s", saved)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestIntegrationDualStackSync runs an IPv4 and an IPv6 proxier side by
// side on one kernel, as upstream's metaproxier does: both families'
// services are in the IPVS table and on kube-ipvs0, each in its own sets
// and tables; neither's sync, partial or full, changes the other's state,
// and the IPv6 services can go while the IPv4 ones stay.
func TestIntegrationDualStackSync(t *testing.T) {
	roottest.Require(t, "creates network namespaces and programs IPVS, ipsets, addresses and ip(6)tables in them")
	roottest.RequireIPVS(t)
	ns := newDualStackTestNetns(t)
	k := openKernel(t, ns)
	ipt4 := execRunner(t, iptkernel.BackendHost, ns)
	v4, err := New(k, ipt4, Options{ClusterCIDR: prefix(clusterPod), MasqueradeBit: 14}, nil)
	if err != nil {
		t.Fatalf("New (IPv4): %v", err)
	}
	v6, ipt6 := newIPv6IntegrationBackend(t, ns, k)

	snap4 := itSnapshot("local:10.244.0.8:8080", "10.244.1.9:8080")
	snap6 := itSnapshot6("local:[fd00:10:244::8]:8080", "[fd00:10:244:1::9]:8080")
	desired := func() (*Desired, *Desired) {
		d4, err4 := v4.Desired(snap4)
		d6, err6 := v6.Desired(snap6)
		if err4 != nil || err6 != nil {
			t.Fatal(err4, err6)
		}
		return d4, d6
	}
	for round, full := range []bool{true, false, true} {
		if round == 2 {
			v4.ForceFullSync()
			v6.ForceFullSync()
		}
		for _, step := range []struct {
			b    *Backend
			snap *model.Snapshot
		}{{v4, snap4}, {v6, snap6}} {
			res, err := step.b.Sync(step.snap)
			if err != nil {
				t.Fatalf("round %d: %s Sync: %v\n%s", round, step.b.settings.Family, err, res.Plan)
			}
			if round > 0 && res.Plan.Count(OpEnsureJump)+res.Plan.Count(OpRestore) != res.Ops {
				t.Errorf("round %d (full=%v): the %s proxier changed what it had written:\n%s", round, full, step.b.settings.Family, res.Plan)
			}
		}
		d4, d6 := desired()
		checkIPVSState(t, ns, k, d4, d6)
	}
	if !strings.Contains(saveAll(t, ipt4), "--match-set KUBE-CLUSTER-IP dst,dst") || !strings.Contains(saveAll(t, ipt6), "--match-set KUBE-6-CLUSTER-IP dst,dst") {
		t.Errorf("each family's rules are not in its tables:\n-- iptables\n%s-- ip6tables\n%s", saveAll(t, ipt4), saveAll(t, ipt6))
	}

	snap6 = snapshot6()
	if res, err := v6.Sync(snap6); err != nil || res.Plan.Count(OpDeleteVirtualServer) == 0 {
		t.Fatalf("removing the IPv6 services: %v\n%s", err, res.Plan)
	}
	d4, d6 := desired()
	checkIPVSState(t, ns, k, d4, d6)

	if err := Cleanup(k, ipt4, ipt6); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	for _, ipt := range []iptkernel.Runner{ipt4, ipt6} {
		if l, err := FindLeftovers(k, ipt); err != nil || !l.Empty() {
			t.Errorf("after Cleanup: %v %v", l, err)
		}
	}
}

// TestIntegrationIPv6Connection opens a real IPv6 TCP connection through
// an IPv6 virtual server (a cluster IP and a node port), as
// TestIntegrationGracefulTermination does over IPv4, and finds it counted
// on the IPv6 real server.
func TestIntegrationIPv6Connection(t *testing.T) {
	roottest.Require(t, "creates network namespaces and sends traffic through IPVS in them")
	roottest.RequireIPVS(t)
	ns := newDualStackTestNetns(t)
	k := openKernel(t, ns)
	b, _ := newIPv6IntegrationBackend(t, ns, k)
	endpoint := netip.AddrPortFrom(addr(itNodeIP6), 8080)
	var ln net.Listener
	roottest.InNetns(t, ns, func() (err error) { ln, err = net.Listen("tcp", endpoint.String()); return err })
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { // echo one line, prefixed with the address the server saw
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				_, _ = c.Write([]byte(c.LocalAddr().String() + " " + line))
			}()
		}
	}()
	snap := snapshot6(sp("default", "web", "", corev1.ProtocolTCP, "fd00:10:96::50", 80, nodePort(30050), eps(endpoint.String())))
	if res, err := b.Sync(snap); err != nil {
		t.Fatalf("Sync: %v\n%s", err, res.Plan)
	}
	for _, target := range []string{"[fd00:10:96::50]:80", "[" + itNodeIP6 + "]:30050"} {
		var reply string
		var err error
		roottest.InNetns(t, ns, func() error { // err is reported below
			d := net.Dialer{Timeout: 10 * time.Second}
			var conn net.Conn
			if conn, err = d.Dial("tcp6", target); err != nil {
				return nil
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err = conn.Write([]byte("hello\n")); err != nil {
				return nil
			}
			reply, err = bufio.NewReader(conn).ReadString('\n')
			return nil
		})
		if want := endpoint.String() + " hello\n"; err != nil || reply != want {
			t.Errorf("through %s: reply %q, %v; want %q (the real server's address)", target, reply, err, want)
		}
	}
	for _, vs := range []kernel.VirtualServer{
		{Address: addr("fd00:10:96::50"), Protocol: kernel.TCP, Port: 80},
		{Address: addr(itNodeIP6), Protocol: kernel.TCP, Port: 30050},
	} {
		rss, err := k.RealServers(vs)
		if err != nil || len(rss) != 1 || rss[0].Key() != endpoint.String() || rss[0].ActiveConn+rss[0].InactiveConn < 1 {
			t.Errorf("%s: real servers %+v, %v; want %s with the connection counted", vs.Key(), rss, err, endpoint)
		}
	}
}

// TestIntegrationIPv6GracefulTermination is TestIntegrationGracefulTermination
// for the IPv6 proxier: a leaving IPv6 real server with a live connection
// drains at weight 0 and is deleted once the connection is gone.
func TestIntegrationIPv6GracefulTermination(t *testing.T) {
	roottest.Require(t, "creates network namespaces and sends traffic through IPVS in them")
	roottest.RequireIPVS(t)
	ns := newDualStackTestNetns(t)
	k := openKernel(t, ns)
	b, _ := newIPv6IntegrationBackend(t, ns, k)
	checkGracefulTermination(t, ns, k, b, addr(itNodeIP6), addr("fd00:10:96::50"))
}

// TestIntegrationIPv6IPSetsAndIP6Tables is TestIntegrationIPSetsAndIPTables
// for the IPv6 proxier: its KUBE-6-* sets of family inet6 and its payload
// go into a real kernel through ip6tables-restore (legacy and nft), read
// back equal, and a changed state touches only the member that changed.
// It needs no IPVS.
func TestIntegrationIPv6IPSetsAndIP6Tables(t *testing.T) {
	roottest.Require(t, "creates network namespaces and writes ipsets and ip6tables rules in them")
	for _, backend := range []iptkernel.Backend{iptkernel.BackendLegacy, iptkernel.BackendNFT} {
		t.Run(string(backend), func(t *testing.T) {
			ns := newDualStackTestNetns(t)
			k := openKernel(t, ns)
			ipt, err := iptkernel.NewExecRunner(iptkernel.ExecOptions{Backend: backend, Family: corev1.IPv6Protocol, NetNS: ns})
			if err != nil {
				t.Fatalf("ip6tables %q backend unusable: %v", backend, err)
			}
			s := baseSettings6()
			s.NodeAddresses, s.NodeIP, s.RandomFully = []netip.Addr{addr(itNodeIP6)}, addr(itNodeIP6), ipt.HasRandomFully()
			setKinds := []OpKind{OpCreateSet, OpAddEntry, OpDelEntry, OpEnsureJump, OpRestore}

			d1 := Compute(itSnapshot6("local:[fd00:10:244::8]:8080", "[fd00:10:244:1::9]:8080"), s)
			plan := onlyKinds(Diff(d1, &Actual{Sets: map[string]ActualSet{}}, DiffOptions{}), setKinds...)
			if _, err := Apply(k, ipt, plan); err != nil {
				t.Fatalf("Apply:\n%s\n%v", plan, err)
			}
			checkSets(t, k, d1)
			if got, ok := ipsetCLI(t, ns, "KUBE-6-LOAD-BALANCER-SOURCE-CID"); ok && !slices.Equal(got, d1.Set(SetLoadBalancerSourceCIDR).Entries) {
				t.Errorf("ipset list KUBE-6-LOAD-BALANCER-SOURCE-CID: %q, want %q", got, d1.Set(SetLoadBalancerSourceCIDR).Entries)
			}
			saved := saveAll(t, ipt)
			for _, want := range []string{
				`-A KUBE-SERVICES -s ::1/128 -j RETURN`,
				`-A KUBE-SERVICES ! -s fd00:10:244::/56 -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-6-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ`,
				`-A KUBE-POSTROUTING -m comment --comment "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose" -m set --match-set KUBE-6-LOOP-BACK dst,dst,src -j MASQUERADE`,
				`-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-6-IPVS-IPS dst -j REJECT --reject-with icmp6-port-unreachable`,
			} {
				if !strings.Contains(saved, want+"\n") {
					t.Errorf("ip6tables-save lacks\n  %s\nhave:\n%s", want, saved)
				}
			}

			d2 := Compute(itSnapshot6("[fd00:10:244:1::9]:8080"), s)
			a := &Actual{DummyExists: true, Sets: readSets(t, k)}
			plan = onlyKinds(Diff(d2, a, DiffOptions{AppliedIPTables: d1.IPTables}), setKinds...)
			want := []string{"ipset del KUBE-6-LOOP-BACK fd00:10:244::8,tcp:8080,fd00:10:244::8"}
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
			if l, err := FindLeftovers(k, ipt); err != nil || !l.Empty() {
				t.Errorf("after Cleanup: %v %v", l, err)
			}
		})
	}
}
