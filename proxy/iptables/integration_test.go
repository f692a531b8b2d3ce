package iptables_test

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
	"github.com/svclab/svclab/proxy/iptables/kernel"
)

// newTestNetns creates an empty network namespace named svclabtest-<random>
// and removes it when the test ends. Nothing here touches the host's own
// namespace.
func newTestNetns(t *testing.T) string {
	t.Helper()
	return roottest.Netns(t, "svclabtest")
}

// saveTables returns iptables-save of filter and nat without comment lines.
func saveTables(t *testing.T, runner kernel.Runner) string {
	t.Helper()
	var all []string
	for _, table := range []string{iptables.TableFilter, iptables.TableNAT} {
		out, err := runner.Save(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if line != "" && !strings.HasPrefix(line, "#") {
				all = append(all, line)
			}
		}
	}
	return strings.Join(all, "\n") + "\n"
}

func kernelDump(t *testing.T, runner kernel.Runner) *iptablestest.Dump {
	t.Helper()
	d, err := iptablestest.ParseSave([]byte(saveTables(t, runner)))
	if err != nil {
		t.Fatalf("parsing iptables-save output: %v", err)
	}
	return d
}

func requireLines(t *testing.T, what, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !slices.Contains(strings.Split(text, "\n"), l) {
			t.Errorf("%s lacks the line\n  %s\nhave:\n%s", what, l, text)
		}
	}
}

// integrationPackets are traced on the kernel's rules and on the fake's.
var integrationPackets = []iptablestest.Packet{
	{Source: netip.MustParseAddr(testOutsideIP), Destination: netip.MustParseAddr("10.96.0.20"), DestinationPort: 80},
	{Source: netip.MustParseAddr("10.244.1.7"), Destination: netip.MustParseAddr("10.96.0.20"), DestinationPort: 80},
	{Source: netip.MustParseAddr("10.244.1.1"), Destination: netip.MustParseAddr("10.96.0.20"), DestinationPort: 80},
	{Source: netip.MustParseAddr(testOutsideIP), Destination: netip.MustParseAddr(testNodeIP), DestinationPort: 30080},
	{Source: netip.MustParseAddr(testOutsideIP), Destination: netip.MustParseAddr(testNodeIP), DestinationPort: 30081},
	{Source: netip.MustParseAddr(testOutsideIP), Destination: netip.MustParseAddr(testNodeIP), DestinationPort: 30082},
	{Source: netip.MustParseAddr("10.244.1.7"), Destination: netip.MustParseAddr(testNodeIP), DestinationPort: 30082},
	{Source: netip.MustParseAddr("10.244.1.7"), Destination: netip.MustParseAddr("10.96.0.50"), DestinationPort: 80},
}

// sameTraces checks that the kernel's (normalised) rules route every
// integration packet like the fake's rules do.
func sameTraces(t *testing.T, kernel, fake *iptablestest.Dump) {
	t.Helper()
	k := &iptablestest.Tracer{Dump: kernel, NodeIPs: testNodeIPs}
	f := &iptablestest.Tracer{Dump: fake, NodeIPs: testNodeIPs}
	summary := func(r iptablestest.Result) string {
		return strings.Join(r.Destinations(), ",") + " all-masq=" + boolString(r.AllMasqueraded()) +
			" any-masq=" + boolString(r.AnyMasqueraded()) + " rejected=" + boolString(r.Rejected()) + " dropped=" + boolString(r.Dropped())
	}
	if got := k.Trace(integrationPackets[0]).Destinations(); len(got) != 2 {
		t.Fatalf("kernel rules: the first packet should reach both web endpoints, got %v", got)
	}
	for _, p := range integrationPackets {
		kr, fr := k.Trace(p), f.Trace(p)
		if summary(kr) != summary(fr) {
			t.Errorf("%s: kernel rules give %s, fake gives %s\nkernel trace:\n%s", p, summary(kr), summary(fr), kr)
		}
	}
}

func boolString(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func TestIntegrationRestoreFullAndPartialSync(t *testing.T) {
	roottest.Require(t, "creates network namespaces and runs iptables-restore in them")
	for _, backend := range []struct {
		backend kernel.Backend
		mode    kernel.Mode
	}{{kernel.BackendLegacy, kernel.ModeLegacy}, {kernel.BackendNFT, kernel.ModeNFTables}} {
		t.Run(string(backend.backend), func(t *testing.T) {
			runner, err := kernel.NewExecRunner(kernel.ExecOptions{Backend: backend.backend, NetNS: newTestNetns(t)})
			if err != nil {
				t.Fatalf("iptables %s backend unusable (install the iptables package): %v", backend.backend, err)
			}
			if runner.Mode() != backend.mode {
				t.Errorf("Mode() = %s, want %s", runner.Mode(), backend.mode)
			}
			opts := testOptions()
			opts.RandomFully = runner.HasRandomFully()
			r := newRenderer(t, opts)
			fake := iptablestest.NewFakeRunner()
			fakeRenderer := newRenderer(t, opts)
			c := packetFlowCluster()

			// Full sync.
			res, err := iptables.Sync(runner, r, c.snapshot())
			if err != nil {
				t.Fatalf("first sync: %v", err)
			}
			if !res.FullSync {
				t.Fatal("first sync was partial, want a full sync")
			}
			if _, err := iptables.Sync(fake, fakeRenderer, c.snapshot()); err != nil {
				t.Fatal(err)
			}
			saved := saveTables(t, runner)
			svcChain := iptables.ServiceChainName("default/web:http", "tcp")
			oldSEP := iptables.EndpointChainName("default/web:http", "tcp", "10.244.2.1:8080")
			masquerade := `-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE`
			if opts.RandomFully {
				masquerade += " --random-fully"
			}
			requireLines(t, "iptables-save after the full sync", saved,
				`-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
				`-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j `+svcChain,
				`-A `+svcChain+` -m comment --comment "default/web:http -> 10.244.1.1:8080" -m statistic --mode random --probability 0.50000000000 -j `+iptables.EndpointChainName("default/web:http", "tcp", "10.244.1.1:8080"),
				`-A `+oldSEP+` -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.244.2.1:8080`,
				`-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000`,
				`-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN`,
				masquerade,
				`-A KUBE-SERVICES -d 10.96.0.50/32 -p tcp -m comment --comment "default/empty:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`,
			)
			sameTraces(t, kernelDump(t, runner), fake.Dump())

			// Partial sync after one endpoint changed.
			c.slices[0].Endpoints[1].Addresses = []string{"10.244.2.99"}
			res, err = iptables.Sync(runner, r, c.snapshot())
			if err != nil {
				t.Fatalf("second sync: %v", err)
			}
			if res.FullSync || res.ChangedServicePorts != 1 || res.FilterTable || res.SharedNATChains {
				t.Fatalf("second sync: full=%v changed=%d filter=%v shared nat=%v, want a partial sync of one service port's own chains",
					res.FullSync, res.ChangedServicePorts, res.FilterTable, res.SharedNATChains)
			}
			if _, err := iptables.Sync(fake, fakeRenderer, c.snapshot()); err != nil {
				t.Fatal(err)
			}
			saved = saveTables(t, runner)
			if strings.Contains(saved, oldSEP) {
				t.Errorf("partial sync left the old endpoint chain %s behind", oldSEP)
			}
			requireLines(t, "iptables-save after the partial sync", saved,
				`-A `+iptables.EndpointChainName("default/web:http", "tcp", "10.244.2.99:8080")+` -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.244.2.99:8080`)
			sameTraces(t, kernelDump(t, runner), fake.Dump())

			// A rejected payload leaves the rules as they were.
			before := saveTables(t, runner)
			bad := string(newRenderer(t, opts).Render(c.snapshot()).Payload())
			const badRule = "-A KUBE-SERVICES -j KUBE-SVC-DOESNOTEXIST0000"
			natCommit := strings.LastIndex(bad, "COMMIT\n")
			bad = bad[:natCommit] + badRule + "\n" + bad[natCommit:]
			// Whole (Restore), and streamed in three parts (RestoreStream,
			// what Sync uses), split inside lines.
			third := len(bad) / 3
			for how, restore := range map[string]func() error{
				"Restore": func() error { return runner.Restore([]byte(bad)) },
				"RestoreStream": func() error {
					return runner.RestoreStream(iptables.ResultOfParts([]byte(bad[:third]), []byte(bad[third:2*third]), []byte(bad[2*third:])))
				},
			} {
				err = restore()
				var re *kernel.RestoreError
				if !errors.As(err, &re) {
					t.Fatalf("%s of a bad payload: want a RestoreError, got %v", how, err)
				}
				badLine := strings.Count(bad[:natCommit], "\n") + 1
				if re.Line != badLine && re.Line != badLine+1 { // nf_tables blames the COMMIT after it
					t.Errorf("%s: RestoreError.Line = %d, want %d or %d: %v", how, re.Line, badLine, badLine+1, re)
				}
				if !slices.ContainsFunc(re.Context, func(l kernel.PayloadLine) bool { return l.Text == badRule }) {
					t.Errorf("%s: RestoreError.Context %v does not show the bad rule", how, re.Context)
				}
				if after := saveTables(t, runner); after != before {
					t.Errorf("%s: a rejected payload changed the rules:\n%s", how, golden.LineDiff(before, after))
				}
			}

			// A forced full sync deletes stale service chains, keeps the
			// jump rules single and leaves other chains alone.
			stale := "*nat\n:KUBE-SVC-STALESTALESTALE1 - [0:0]\n:MY-OWN-CHAIN - [0:0]\nCOMMIT\n"
			if err := runner.Restore([]byte(stale)); err != nil {
				t.Fatal(err)
			}
			r.Reset()
			if res, err = iptables.Sync(runner, r, c.snapshot()); err != nil {
				t.Fatalf("forced full sync: %v", err)
			} else if !res.FullSync {
				t.Fatal("forced sync was partial, want a full sync")
			}
			saved = saveTables(t, runner)
			if strings.Contains(saved, "KUBE-SVC-STALESTALESTALE1") || !strings.Contains(saved, ":MY-OWN-CHAIN") {
				t.Errorf("after a full sync the stale chain must be gone and MY-OWN-CHAIN kept:\n%s", saved)
			}
			if n := strings.Count(saved, `-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`); n != 1 {
				t.Errorf("PREROUTING has the jump %d times, want 1", n)
			}
			sameTraces(t, kernelDump(t, runner), fake.Dump())
		})
	}
}
