package kube

import "testing"

func TestMetricReadsLabelledAndPlainSeries(t *testing.T) {
	text := `# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds [ALPHA] The last time proxy rules were successfully synced
kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"} 1.795423470073334e+09
kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1.7954234710274978e+09
kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv6"} 1.7e+09
`
	v, ok := metric(text, "kubeproxy_sync_proxy_rules_last_timestamp_seconds")
	if !ok || v != 1.7954234710274978e+09 {
		t.Fatalf("labelled: got %v %v", v, ok)
	}
	if v, ok := metric("kubeproxy_sync_proxy_rules_last_timestamp_seconds 12.5\n", "kubeproxy_sync_proxy_rules_last_timestamp_seconds"); !ok || v != 12.5 {
		t.Fatalf("plain: got %v %v", v, ok)
	}
	if _, ok := metric(text, "kubeproxy_sync_proxy_rules_last"); ok {
		t.Fatal("a name prefix must not match")
	}
}
