package labstore

import (
	"os"
	"testing"
)

// TestWriteLastTrace: both files land in the lab's directory, under the
// names svclab ui reads, and a second trace replaces the first.
func TestWriteLastTrace(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("demo")
	for _, body := range []string{"first", "second"} {
		if err := s.WriteLastTrace([]byte(`{"lab":"`+body+`"}`), []byte("<svg>"+body+"</svg>")); err != nil {
			t.Fatal(err)
		}
	}
	j, err1 := os.ReadFile(s.Path(LastTraceJSON))
	v, err2 := os.ReadFile(s.Path(LastTraceSVG))
	if err1 != nil || err2 != nil || string(j) != `{"lab":"second"}` || string(v) != "<svg>second</svg>" {
		t.Errorf("last trace read back: %q %q (%v, %v)", j, v, err1, err2)
	}
	if err := Open("..").WriteLastTrace(nil, nil); err == nil {
		t.Errorf("a store named .. wrote its last trace")
	}
}
