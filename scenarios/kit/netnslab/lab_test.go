package netnslab

import (
	"testing"

	"github.com/svclab/svclab/labs/netns"
)

func TestProgramTimeoutIsLongerInTheVM(t *testing.T) {
	if got := programTimeout(false); got != netns.DefaultTimeout {
		t.Errorf("on the host: %s, want netns.DefaultTimeout (%s)", got, netns.DefaultTimeout)
	}
	if got := programTimeout(true); got != 4*netns.DefaultTimeout {
		t.Errorf("in the VM: %s, want 4×%s", got, netns.DefaultTimeout)
	}
}
