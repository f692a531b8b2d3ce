package netns

import "testing"

func TestDefaultTimeoutIsLongerInTheVM(t *testing.T) {
	if got := defaultTimeout(false); got != DefaultTimeout {
		t.Errorf("on the host: %s, want DefaultTimeout (%s)", got, DefaultTimeout)
	}
	if got := defaultTimeout(true); got != 4*DefaultTimeout {
		t.Errorf("in the VM: %s, want 4×%s", got, DefaultTimeout)
	}
	t.Setenv("SVCLAB_VM", "1")
	if o, err := (Options{Binary: "/x"}).withDefaults(); err != nil || o.Timeout != 4*DefaultTimeout {
		t.Errorf("withDefaults in the VM: %s, %v; want 4×%s", o.Timeout, err, DefaultTimeout)
	}
}
