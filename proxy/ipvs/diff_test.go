package ipvs

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

func planLines(p Plan) []string {
	return strings.Split(strings.TrimSuffix(p.String(), "\n"), "\n")
}

// actualOf is the kernel state right after d was applied.
func actualOf(d *Desired) *Actual {
	a := &Actual{DummyExists: true, Addresses: d.Addresses, Sets: map[string]ActualSet{}}
	for _, s := range d.Sets {
		a.Sets[s.Name] = ActualSet{Type: s.Type, Entries: s.Entries}
	}
	for _, vs := range d.VirtualServers {
		a.VirtualServers = append(a.VirtualServers, ActualVirtualServer{VirtualServer: vs.VirtualServer, RealServers: vs.RealServers})
	}
	return a
}

func TestDiffOfAnEmptyKernel(t *testing.T) {
	d := Compute(snapshot(sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, eps("10.244.1.1:80"))), baseSettings())
	p := Diff(d, &Actual{Sets: map[string]ActualSet{}}, DiffOptions{})
	got := planLines(p)
	want := []string{
		"ip link add kube-ipvs0 type dummy",
		"ipset create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536 -exist",
	}
	if !slices.Equal(got[:2], want) {
		t.Errorf("plan starts with %q, want %q", got[:2], want)
	}
	for _, line := range []string{
		"ipset create KUBE-NODE-PORT-TCP bitmap:port range 0-65535 -exist",
		"ipvsadm -A -t 10.96.0.20:80 -s rr",
		"ipvsadm -a -t 10.96.0.20:80 -r 10.244.1.1:80 -m -w 1",
		"ip addr add 10.96.0.20/32 dev kube-ipvs0",
		"ipset add KUBE-CLUSTER-IP 10.96.0.20,tcp:80 -exist",
	} {
		if !slices.Contains(got, line) {
			t.Errorf("plan lacks %q:\n%s", line, p)
		}
	}
	if p.Count(OpCreateSet) != len(Sets) || p.Count(OpEnsureJump) != len(jumpRules) || p.Count(OpRestore) != 1 {
		t.Errorf("plan: %d sets, %d jumps, %d restores", p.Count(OpCreateSet), p.Count(OpEnsureJump), p.Count(OpRestore))
	}
	// Order: sets exist before the payload that matches them; real
	// servers follow their virtual server; removals come last.
	idx := func(k OpKind) int { return slices.IndexFunc(p, func(o Op) bool { return o.Kind == k }) }
	if !(idx(OpCreateSet) < idx(OpAddVirtualServer) && idx(OpAddVirtualServer) < idx(OpAddRealServer) &&
		idx(OpAddRealServer) < idx(OpBindAddress) && idx(OpAddEntry) < idx(OpRestore)) {
		t.Errorf("ops out of order:\n%s", p)
	}
}

func TestDiffOfTheSameStateIsEmpty(t *testing.T) {
	d := Compute(snapshot(kubeDNS()...), baseSettings())
	if p := Diff(d, actualOf(d), DiffOptions{AppliedIPTables: d.IPTables}); len(p) != 0 {
		t.Errorf("plan for an unchanged state:\n%s", p)
	}
}

func TestDiffUpdatesAChangedVirtualServer(t *testing.T) {
	before := Compute(snapshot(sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, eps("10.244.1.1:80"))), baseSettings())
	after := Compute(snapshot(sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, clientIP(600), eps("10.244.1.1:80"))), baseSettings())
	p := Diff(after, actualOf(before), DiffOptions{AppliedIPTables: after.IPTables})
	if got := planLines(p); !slices.Equal(got, []string{"ipvsadm -E -t 10.96.0.20:80 -s rr -p 600"}) {
		t.Errorf("plan %q", got)
	}
}

func TestDiffLeavesExcludedVirtualServers(t *testing.T) {
	d := Compute(snapshot(), baseSettings())
	a := actualOf(d)
	foreign := func(ip string) ActualVirtualServer {
		return ActualVirtualServer{VirtualServer: kernel.VirtualServer{Address: addr(ip), Protocol: kernel.TCP, Port: 80, Scheduler: "wlc"}}
	}
	a.VirtualServers = append(a.VirtualServers, foreign("172.16.5.5"), foreign("10.96.9.9"))
	p := Diff(d, a, DiffOptions{ExcludeCIDRs: []netip.Prefix{prefix("172.16.0.0/12")}, AppliedIPTables: d.IPTables})
	if got := planLines(p); !slices.Equal(got, []string{"ipvsadm -D -t 10.96.9.9:80"}) {
		t.Errorf("plan %q, want only the non-excluded service deleted", got)
	}
}

func TestDiffSorted(t *testing.T) {
	gone, added := diffSorted([]string{"a", "c", "d"}, []string{"b", "c", "e"})
	if !slices.Equal(gone, []string{"a", "d"}) || !slices.Equal(added, []string{"b", "e"}) {
		t.Errorf("gone %v added %v", gone, added)
	}
}

func TestApplySkipsRealServersOfAFailedVirtualServer(t *testing.T) {
	b, k, _ := newTestBackend(t, Options{})
	k.Fail = func(call string) error {
		if strings.HasPrefix(call, "ipvsadm -A -t 10.96.0.20:80") {
			return errors.New("injected")
		}
		return nil
	}
	snap := snapshot(sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, eps("10.244.1.1:80")),
		sp("default", "other", "", corev1.ProtocolTCP, "10.96.0.21", 80, eps("10.244.1.2:80")))
	res, err := b.Sync(snap)
	if err == nil || !strings.Contains(err.Error(), "ipvsadm -A -t 10.96.0.20:80 -s rr: injected") {
		t.Fatalf("Sync error %v, want the failed command named", err)
	}
	if slices.ContainsFunc(k.Calls, func(c string) bool { return strings.Contains(c, "10.96.0.20:80 -r") }) {
		t.Errorf("real servers added to the failed virtual server: %q", k.Calls)
	}
	if !slices.Contains(k.Calls, "ipvsadm -a -t 10.96.0.21:80 -r 10.244.1.2:80 -m -w 1") {
		t.Errorf("the other service was not synced: %q", k.Calls)
	}
	if !res.Full {
		t.Error("first sync not full")
	}

	// The next sync retries the failed part and rewrites iptables in full.
	k.Fail = nil
	k.ResetCalls()
	res = mustSync(t, b, snap)
	if !res.Full || res.Plan.Count(OpAddVirtualServer) != 1 || res.Plan.Count(OpRestore) != 1 {
		t.Errorf("retry plan (full=%v):\n%s", res.Full, res.Plan)
	}
}

func TestRestoreFailureStopsBeforeRemovals(t *testing.T) {
	b, _, ipt := newTestBackend(t, Options{})
	mustSync(t, b, snapshot(kubeDNS()...))
	ipt.tables["nat"] = nil // the next restore fails: unknown table
	_, err := b.Sync(snapshot(sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, nodePort(30080))))
	if err == nil || !strings.Contains(err.Error(), "iptables-restore") {
		t.Fatalf("Sync: %v", err)
	}
	if vss, _ := b.k.VirtualServers(); !slices.ContainsFunc(vss, func(v kernel.VirtualServer) bool { return v.Address == addr("10.96.0.10") }) {
		t.Errorf("kube-dns's virtual server was removed although the restore failed")
	}
}
