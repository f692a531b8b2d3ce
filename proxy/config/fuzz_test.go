package config_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
	"github.com/svclab/svclab/proxy/model"
)

const fuzzHeader = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"

// FuzzParse decodes any KubeProxyConfiguration document. It gives a Config
// or errors that are each a *config.Error naming the source, never a panic.
// A Config keeps the promises its fields document (a known mode, a positive
// sync period not below the minimum, a masquerade bit of 0..31, at most one
// cluster CIDR per family, host:port bind addresses), reads back the same
// from its own defaulted document, and gives an iptables renderer whose
// fixed rules restore in the fake that rejects what the kernel rejects.
func FuzzParse(f *testing.F) {
	f.Add(fuzzHeader)
	f.Add(fuzzHeader + "mode: ipvs\nipvs: {scheduler: wrr, tcpTimeout: 10s, excludeCIDRs: [10.0.0.0/8]}\n")
	f.Add(fuzzHeader + "mode: iptables\nclusterCIDR: 10.244.0.0/16,fd00::/48\niptables: {masqueradeBit: 31, masqueradeAll: true, syncPeriod: 1m, minSyncPeriod: 0s}\n")
	f.Add(fuzzHeader + "bindAddress: 0.0.0.0\nhealthzBindAddress: '[::]:10256'\nmetricsBindAddress: 127.0.0.1\n")
	f.Add(fuzzHeader + "mode: nftables\nnftables: {masqueradeBit: 3, syncPeriod: 5s, minSyncPeriod: 10s}\n")
	f.Add(fuzzHeader + "iptables:\n  syncPeriod: 30 seconds\n")
	f.Add("{\"apiVersion\": \"kubeproxy.config.k8s.io/v1alpha1\", \"kind\": \"KubeProxyConfiguration\", \"mode\": \"\"}")
	f.Add("mode: iptables\nmode: ipvs\n")
	f.Add(fuzzHeader + "nodePortAddresses: [192.168.0.0/16, fd00::/64]\niptables: {localhostNodePorts: true}\n")
	shipped, err := filepath.Glob("../../clusters/*/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range shipped {
		if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), "KubeProxyConfiguration") {
			f.Add(string(data))
		}
	}
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := config.Parse("f.yaml", []byte(doc))
		if err != nil {
			checkErrors(t, err)
			return
		}
		checkConfig(t, c)
		again, err := yaml.Marshal(c.Versioned)
		if err != nil {
			t.Fatalf("cannot re-encode the defaulted document: %v", err)
		}
		c2, err := config.Parse("f.yaml", again)
		if err != nil {
			t.Fatalf("the defaulted document does not parse: %v\n%s", err, again)
		}
		c.Versioned, c2.Versioned = nil, nil
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("the defaulted document reads differently:\n%+v\n%+v", c, c2)
		}
	})
}

// checkErrors wants every joined error to be a *config.Error naming f.yaml.
func checkErrors(t *testing.T, err error) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var ce *config.Error
		if !errors.As(e, &ce) || ce.Source != "f.yaml" || !strings.HasPrefix(e.Error(), "f.yaml: ") {
			t.Fatalf("error %q is not a *config.Error naming f.yaml", e)
		}
	}
}

func checkConfig(t *testing.T, c config.Config) {
	t.Helper()
	if c.Source != "f.yaml" || c.Versioned == nil {
		t.Errorf("Source %q, Versioned %v", c.Source, c.Versioned)
	}
	if !slices.Contains(config.KnownModes, c.Mode) {
		t.Errorf("mode %q is not a known one", c.Mode)
	}
	if c.SyncPeriod <= 0 || c.MinSyncPeriod < 0 || c.MinSyncPeriod > c.SyncPeriod {
		t.Errorf("syncPeriod %v, minSyncPeriod %v", c.SyncPeriod, c.MinSyncPeriod)
	}
	if c.MasqueradeBit < 0 || c.MasqueradeBit > 31 {
		t.Errorf("masqueradeBit %d", c.MasqueradeBit)
	}
	var v4, v6 int
	for _, p := range c.ClusterCIDRs {
		if !p.IsValid() {
			t.Errorf("invalid cluster CIDR in %v", c.ClusterCIDRs)
		}
		if p.Addr().Is4() {
			v4++
		} else {
			v6++
		}
	}
	if v4 > 1 || v6 > 1 {
		t.Errorf("cluster CIDRs %v: more than one of a family", c.ClusterCIDRs)
	}
	for _, addr := range []string{c.MetricsBindAddress, c.HealthzBindAddress} {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			t.Errorf("bind address %q: %v", addr, err)
		}
	}
	var clusterCIDR string
	for _, p := range c.ClusterCIDRs {
		if p.Addr().Is4() {
			clusterCIDR = p.String()
		}
	}
	r, err := iptables.NewRenderer(iptables.Options{ClusterCIDR: clusterCIDR, MasqueradeBit: c.MasqueradeBit, MasqueradeAll: c.MasqueradeAll,
		LocalhostNodePorts: c.IPv4LocalhostNodePorts()})
	if err != nil {
		t.Fatalf("a valid config gives no iptables renderer: %v", err)
	}
	res := r.Render(model.Build(nil, nil, "node"))
	if err := iptablestest.NewFakeRunner().Restore(res.Payload()); err != nil {
		t.Fatalf("the fixed rules of a valid config do not restore: %v", err)
	}
}
