package iptables_test

import (
	"errors"
	"testing"

	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
	"github.com/svclab/svclab/proxy/iptables/kernel"
)

func TestSyncEnsuresJumpsAndRecoversFromFailure(t *testing.T) {
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	c := threeServices()

	res, err := iptables.Sync(fake, r, c.snapshot())
	if err != nil || !res.FullSync {
		t.Fatalf("first Sync: full=%v err=%v", res.FullSync, err)
	}
	if pre := fake.Dump().Chain("nat", "PREROUTING"); len(pre.Rules) != 1 || pre.Rules[0].Jump != "KUBE-SERVICES" {
		t.Errorf("PREROUTING = %v, want the jump to KUBE-SERVICES", pre.Rules)
	}

	res, err = iptables.Sync(fake, r, c.snapshot())
	if err != nil || res.FullSync {
		t.Fatalf("second Sync: full=%v err=%v, want partial", res.FullSync, err)
	}

	// A failed restore makes the next sync full.
	fake.FailRestore = errors.New("injected failure")
	c.slices[0].Endpoints[0].Addresses = []string{"10.244.1.99"}
	if _, err := iptables.Sync(fake, r, c.snapshot()); err == nil {
		t.Fatal("want the injected failure")
	}
	fake.FailRestore = nil
	res, err = iptables.Sync(fake, r, c.snapshot())
	if err != nil || !res.FullSync {
		t.Fatalf("Sync after failure: full=%v err=%v, want full", res.FullSync, err)
	}
	if pre := fake.Dump().Chain("nat", "PREROUTING"); len(pre.Rules) != 1 {
		t.Errorf("jump rules must not be duplicated by repeated full syncs: %v", pre.Rules)
	}
	assertSameAsFreshFullSync(t, fake, testOptions(), c.snapshot())
}

func TestSyncReturnsRestoreErrorWithTheOffendingLine(t *testing.T) {
	fake := iptablestest.NewFakeRunner()
	// A stale service chain that someone else's rule still jumps to: the
	// full sync's -X of it is refused, as the kernel would.
	leftover := "*nat\n:KUBE-SVC-STALESTALESTALE1 - [0:0]\n:OTHER - [0:0]\n-A OTHER -j KUBE-SVC-STALESTALESTALE1\nCOMMIT\n"
	if err := fake.Restore([]byte(leftover)); err != nil {
		t.Fatal(err)
	}
	r := newRenderer(t, testOptions())
	res, err := iptables.Sync(fake, r, threeServices().snapshot())
	var re *kernel.RestoreError
	if !errors.As(err, &re) {
		t.Fatalf("want a RestoreError, got %v", err)
	}
	if re.OffendingLine() != "-X KUBE-SVC-STALESTALESTALE1" {
		t.Errorf("offending line = %q (line %d)", re.OffendingLine(), re.Line)
	}
	if !r.NeedsFullSync() || res == nil {
		t.Error("after a failed sync the renderer must want a full sync, and the result must be returned")
	}
}
