package cmdline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFindBadInput: a $SVCLAB_CONFORMANCE_BIN that does not exist, and no
// binary beside the running executable (this test's, in a temporary
// directory) — each one error saying `make build` builds it.
func TestFindBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), Binary)
	t.Setenv(BinaryEnv, missing)
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "make build") {
		t.Errorf("Find with $%s=%s: %v, want an error naming it and `make build`", BinaryEnv, missing, err)
	}
	t.Setenv(BinaryEnv, "")
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), Binary) || !strings.Contains(err.Error(), "make build") {
		t.Errorf("Find with no binary beside the test: %v, want an error naming %s and `make build`", err, Binary)
	}
}

func TestFindTakesTheEnvironment(t *testing.T) {
	bin := filepath.Join(t.TempDir(), Binary)
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinaryEnv, bin)
	if got, err := Find(); err != nil || got != bin {
		t.Errorf("Find with $%s=%s: %q, %v", BinaryEnv, bin, got, err)
	}
}

// TestCheckBadInput: a cluster that exists and one made for the run at
// once, or kind settings without a kind config.
func TestCheckBadInput(t *testing.T) {
	for _, f := range []Flags{
		{Kubeconfig: "a.kubeconfig", KindConfig: "clusters/kind/flannel-vxlan.yaml"},
		{Kubeconfig: "a.kubeconfig", KindCNI: "flannel-vxlan"},
		{Kubeconfig: "a.kubeconfig", IPFamily: "IPv6"}, // kind's and upstream e2e's values are lower case
	} {
		if err := f.Check(); err == nil {
			t.Errorf("Check %+v: no error", f)
		}
	}
	if err := (Flags{Kubeconfig: "a.kubeconfig"}).Check(); err != nil {
		t.Errorf("Check with a kubeconfig: %v", err)
	}
}

func TestIPFamilies(t *testing.T) {
	for value, want := range map[string][]string{"": nil, "ipv4": {"IPv4"}, "ipv6": {"IPv6"}, "dual": {"IPv4", "IPv6"}} {
		got, err := IPFamilies(value)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("IPFamilies(%q) = %v, %v; want %v", value, got, err, want)
		}
	}
	if _, err := IPFamilies("dualstack"); err == nil || !strings.Contains(err.Error(), "ipv4, ipv6 or dual") {
		t.Errorf("IPFamilies(dualstack): %v, want an error naming the values", err)
	}
}
