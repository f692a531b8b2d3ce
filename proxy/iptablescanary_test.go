package proxy

import (
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
	"github.com/svclab/svclab/proxy/model"
)

// countingCanaryRunner counts the canary checks (each one `iptables -S`
// with the exec runner).
type countingCanaryRunner struct {
	canaryFakeRunner
	checks *int
}

func (r countingCanaryRunner) ChainExists(table, chain string) (bool, error) {
	*r.checks++
	return r.canaryFakeRunner.ChainExists(table, chain)
}

// TestIPTablesCanaryCheckedOnlyAfterAFullSync: while the next sync is full
// anyway (before the first, after a forced resync) the canary check runs
// nothing and reports the canary present; after a sync it looks at mangle
// once per check and sees a flush.
func TestIPTablesCanaryCheckedOnlyAfterAFullSync(t *testing.T) {
	cfg, err := config.Parse("config.conf", []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\n"))
	if err != nil {
		t.Fatal(err)
	}
	checks := 0
	fake := countingCanaryRunner{canaryFakeRunner{iptablestest.NewFakeRunner()}, &checks}
	sys := &fakeSysctls{values: map[string]int{sysctlRouteLocalnet: 0, sysctlNFConntrackTCPBeLiberal: 0}}
	b, err := startIPTablesBackend(cfg, corev1.IPv4Protocol, nodePortSelection{}, fake, "fake iptables", sys, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c := b.(Canaried)
	expect := func(when string, wantMissing bool, wantChecks int) {
		t.Helper()
		missing, err := c.CanaryMissing()
		if err != nil || missing != wantMissing || checks != wantChecks {
			t.Errorf("%s: CanaryMissing = %v, %v after %d checks; want %v, nil after %d", when, missing, err, checks, wantMissing, wantChecks)
		}
	}
	expect("before the first sync", false, 0)

	objs := dualStackObjects()
	snap := model.BuildFamily(corev1.IPv4Protocol, objs.Services, objs.EndpointSlices, "n1")
	if _, err := b.Sync(snap); err != nil {
		t.Fatal(err)
	}
	expect("after the first sync", false, 1)
	if err := fake.Restore([]byte("*mangle\n-X KUBE-PROXY-CANARY\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	expect("after mangle's canary was deleted", true, 2)

	b.(FullSyncer).ForceFullSync()
	expect("with a full sync due", false, 2)
	if _, err := b.Sync(snap); err != nil {
		t.Fatal(err)
	}
	expect("after the full sync put the canary back", false, 3)
}
