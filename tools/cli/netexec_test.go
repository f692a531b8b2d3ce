package cli

import (
	"slices"
	"testing"
)

// The server's UDP ports follow agnhost netexec's --udp-port: 8081 when
// the flag is not given, none for -1.
func TestNetexecUDPPorts(t *testing.T) {
	for _, tt := range []struct{ flag, want []int }{
		{nil, []int{8081}},
		{[]int{-1}, nil},
		{[]int{8080}, []int{8080}},
		{[]int{8080, 9090}, []int{8080, 9090}},
	} {
		if got := udpPorts(tt.flag); !slices.Equal(got, tt.want) {
			t.Errorf("--udp-port %v: serves %v, want %v", tt.flag, got, tt.want)
		}
	}
}
