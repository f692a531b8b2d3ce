package kind

import (
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// An ipv6 or dual cluster needs the kind network with IPv6, or none yet.
func TestKindNetworkIPv6Verdict(t *testing.T) {
	for _, tc := range []struct {
		ls      string
		wantErr bool
	}{
		{"", false},
		{"kind true\n", false},
		{"kind false\n", true},
		{"kind-other false\n", false},
	} {
		err := kindNetworkIPv6Verdict("kind", v1alpha4.DualStackFamily, tc.ls)
		if (err != nil) != tc.wantErr || (err != nil && !strings.Contains(err.Error(), "docker network rm kind")) {
			t.Errorf("%q: got %v, want error %v", tc.ls, err, tc.wantErr)
		}
	}
}
