package localtraffic

import (
	"slices"
	"testing"
)

// TestDetectors: each detector's two matches, and the no-op detector.
func TestDetectors(t *testing.T) {
	d, err := ByCIDR("10.244.0.0/16")
	if err != nil || !d.Implemented() || !slices.Equal(d.IfLocal, []string{"-s", "10.244.0.0/16"}) || !slices.Equal(d.IfNotLocal, []string{"!", "-s", "10.244.0.0/16"}) {
		t.Errorf("ByCIDR = %+v, %v", d, err)
	}
	d, err = ByCIDR("fd00:10:244::/56")
	if err != nil || !slices.Equal(d.IfNotLocal, []string{"!", "-s", "fd00:10:244::/56"}) {
		t.Errorf("ByCIDR(IPv6) = %+v, %v", d, err)
	}
	for _, bad := range []string{"10.244.0.0", "fd00::1"} {
		if _, err := ByCIDR(bad); err == nil {
			t.Errorf("ByCIDR(%q) accepted", bad)
		}
	}
	if d := ByBridgeInterface("cni0"); !slices.Equal(d.IfNotLocal, []string{"!", "-i", "cni0"}) {
		t.Errorf("ByBridgeInterface = %+v", d)
	}
	if d := ByInterfaceNamePrefix("veth"); !slices.Equal(d.IfLocal, []string{"-i", "veth+"}) {
		t.Errorf("ByInterfaceNamePrefix = %+v", d)
	}
	var none *Detector
	if none.Implemented() || (&Detector{}).Implemented() {
		t.Error("the no-op detector matches")
	}
}
