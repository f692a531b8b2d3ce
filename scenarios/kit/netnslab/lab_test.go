package netnslab

import (
	"testing"

	"github.com/svclab/svclab/labs/netns"
)

func TestProgramTimeoutIsTheLabsBoundHere(t *testing.T) {
	if ProgramTimeout != netns.TimeoutHere() {
		t.Errorf("ProgramTimeout %s, want netns.TimeoutHere() %s", ProgramTimeout, netns.TimeoutHere())
	}
}
