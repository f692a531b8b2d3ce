package chains

import "testing"

// TestIsPerService: the five per-service prefixes, and none of the chains
// the mode owns in full.
func TestIsPerService(t *testing.T) {
	for _, c := range []string{"KUBE-SVC-NPX46M4PTMTKRN6Y", "KUBE-SVL-X", "KUBE-EXT-X", "KUBE-FW-X", "KUBE-SEP-X"} {
		if !IsPerService(c) {
			t.Errorf("IsPerService(%s) = false", c)
		}
	}
	for _, c := range []string{Services, ExternalServices, NodePorts, Postrouting, MarkMasq, Forward, ProxyFirewall, KubeletFirewall, ProxyCanary, "KUBE-SVC", "FLANNEL-POSTRTG"} {
		if IsPerService(c) {
			t.Errorf("IsPerService(%s) = true", c)
		}
	}
}
