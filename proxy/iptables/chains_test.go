package iptables

import "testing"

func TestServiceChainNameMatchesUpstreamVectors(t *testing.T) {
	cases := []struct {
		servicePortName, protocol, want string
	}{
		{"default/kubernetes:https", "tcp", "KUBE-SVC-NPX46M4PTMTKRN6Y"},
		{"kube-system/kube-dns:dns", "udp", "KUBE-SVC-TCOU7JCQXEZGVUNU"},
		// Unnamed port, current upstream form (no trailing colon).
		{"default/nginx", "tcp", "KUBE-SVC-2CMXP7HKUVJN7L6M"},
		// Unnamed port as kube-proxy wrote it before the EndpointSlice
		// rewrite ("ns/name:" with a trailing colon), as seen in 2017-era
		// articles. We follow current upstream, so our renderer never
		// produces this name for default/mysql-service.
		{"default/mysql-service:", "tcp", "KUBE-SVC-67RL4FN6JRUPOJYM"},
		// From upstream's TestOverallIPTablesRules.
		{"ns1/svc1:p80", "tcp", "KUBE-SVC-XPGD46QRK7WJZT7O"},
	}
	for _, c := range cases {
		if got := ServiceChainName(c.servicePortName, c.protocol); got != c.want {
			t.Errorf("ServiceChainName(%q, %q) = %s, want %s", c.servicePortName, c.protocol, got, c.want)
		}
	}
}

func TestEndpointChainNameMatchesUpstreamVectors(t *testing.T) {
	cases := []struct {
		servicePortName, protocol, endpoint, want string
	}{
		{"default/nginx", "tcp", "10.244.169.147:80", "KUBE-SEP-LNPQQIWGFNOA5PA2"},
		// From upstream's TestOverallIPTablesRules.
		{"ns1/svc1:p80", "tcp", "10.180.0.1:80", "KUBE-SEP-SXIVWICOYRO3J4NJ"},
	}
	for _, c := range cases {
		if got := EndpointChainName(c.servicePortName, c.protocol, c.endpoint); got != c.want {
			t.Errorf("EndpointChainName(%q, %q, %q) = %s, want %s", c.servicePortName, c.protocol, c.endpoint, got, c.want)
		}
	}
}

func TestOtherChainNamesShareTheServiceHash(t *testing.T) {
	// From upstream's TestOverallIPTablesRules: ns5/svc5:p80 has both an EXT
	// and an FW chain with the hash of its SVC chain.
	const name = "ns5/svc5:p80"
	if got := ExternalChainName(name, "tcp"); got != "KUBE-EXT-NUKIZ6OKUXPJNT4C" {
		t.Errorf("ExternalChainName = %s", got)
	}
	if got := FirewallChainName(name, "tcp"); got != "KUBE-FW-NUKIZ6OKUXPJNT4C" {
		t.Errorf("FirewallChainName = %s", got)
	}
	if got := LocalServiceChainName(name, "tcp"); got != "KUBE-SVL-NUKIZ6OKUXPJNT4C" {
		t.Errorf("LocalServiceChainName = %s", got)
	}
}
