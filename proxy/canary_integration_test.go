package proxy

import (
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/chains"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
)

// TestIntegrationCanaryRestoresFlushedRules: on the real kernel, in a
// network namespace of its own, the sync loop in iptables mode programs a
// service; someone then flushes and deletes every nat and mangle chain
// (the canary with them, as a firewall reload does); by the next
// SyncPeriod tick the loop has noticed the missing canary and a full
// resync has put the service's rules and the canary back.
func TestIntegrationCanaryRestoresFlushedRules(t *testing.T) {
	roottest.Require(t, "programs iptables in a network namespace")
	ns := roottest.Netns(t, "svclabcan")
	runner, err := iptkernel.NewExecRunner(iptkernel.ExecOptions{NetNS: ns})
	if err != nil {
		t.Fatal(err)
	}
	renderer, err := iptables.NewRenderer(iptables.Options{ClusterCIDR: "10.244.0.0/16", RandomFully: runner.HasRandomFully()})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	be := &iptablesBackend{runner: runner, renderer: renderer, log: log}
	ch := startLoop(t, &Loop{Source: &fakeSource{}, Backend: be, SyncPeriod: 200 * time.Millisecond, Log: log})
	if o := nextWithin(t, ch, time.Minute); o.Err != nil || !o.Stats.Full {
		t.Fatalf("first sync: %+v", o)
	}
	requireProgrammed(t, ns)

	// One iptables-restore without --noflush empties both tables and deletes
	// their chains in one transaction, as a firewall reload does. (Separate
	// iptables -F and -X calls raced the loop: it could notice the canary
	// gone and put a jump back between them, and -X then failed with EBUSY.)
	flush := exec.Command("ip", "netns", "exec", ns, "iptables-restore")
	flush.Stdin = strings.NewReader("*nat\nCOMMIT\n*mangle\nCOMMIT\n")
	if out, err := flush.CombinedOutput(); err != nil {
		t.Fatalf("iptables-restore flushing nat and mangle: %v: %s", err, out)
	}
	// Only a full sync rewrites the nat table's jumps; with FullSyncPeriod
	// an hour, a full sync now can only come from a missing canary.
	deadline := time.Now().Add(time.Minute)
	fullSyncs := 0
	for fullSyncs == 0 || programmedProblem(t, ns) != "" {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the flush: %d full resyncs, %s", fullSyncs, programmedProblem(t, ns))
		}
		if o := nextWithin(t, ch, time.Minute); o.Err == nil && o.Stats.Full {
			fullSyncs++
		}
	}
}

// requireProgrammed checks that the nat table holds the jump from
// PREROUTING and the masquerade rule, and every canary table the canary
// (the service, without endpoints, has its REJECT rule in the filter table,
// which the flush leaves alone).
func requireProgrammed(t *testing.T, ns string) {
	t.Helper()
	if p := programmedProblem(t, ns); p != "" {
		t.Fatal(p)
	}
}

// programmedProblem says what requireProgrammed misses ("" for nothing).
func programmedProblem(t *testing.T, ns string) string {
	t.Helper()
	nat := save(t, ns, "nat")
	for _, rule := range []string{
		`-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
		`-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE`,
	} {
		if !strings.Contains(nat, rule) {
			return "nat table lacks " + rule + ":\n" + nat
		}
	}
	for _, table := range iptables.CanaryTables {
		if !strings.Contains(save(t, ns, table), ":"+chains.ProxyCanary+" ") {
			return "table " + table + " lacks " + chains.ProxyCanary
		}
	}
	return ""
}

func save(t *testing.T, ns, table string) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "iptables-save", "-t", table).CombinedOutput()
	if err != nil {
		t.Fatalf("iptables-save -t %s: %v: %s", table, err, out)
	}
	return string(out)
}

// nextWithin is next with a bound fit for a loaded host running iptables.
func nextWithin(t *testing.T, ch <-chan Outcome, d time.Duration) Outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(d):
		t.Fatalf("no sync within %s", d)
		return Outcome{}
	}
}
