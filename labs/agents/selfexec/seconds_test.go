package selfexec

import (
	"slices"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/svclab/svclab/labs/agents/netexec"
)

// --delay-shutdown takes agnhost's whole seconds and Go durations, and a
// command line written from the options parses back to them.
func TestNetexecDelayShutdownTakesAgnhostSeconds(t *testing.T) {
	for _, tt := range []struct {
		arg  string
		want time.Duration
	}{{"100", 100 * time.Second}, {"1m30s", 90 * time.Second}, {"0", 0}} {
		var n Netexec
		fs := pflag.NewFlagSet("netexec", pflag.ContinueOnError)
		n.AddFlags(fs)
		if err := fs.Parse([]string{"--delay-shutdown=" + tt.arg}); err != nil {
			t.Fatalf("--delay-shutdown=%s: %v", tt.arg, err)
		}
		if n.DelayShutdown != tt.want {
			t.Errorf("--delay-shutdown=%s: %s, want %s", tt.arg, n.DelayShutdown, tt.want)
		}
	}
	var n Netexec
	fs := pflag.NewFlagSet("netexec", pflag.ContinueOnError)
	n.AddFlags(fs)
	if err := fs.Parse([]string{"--delay-shutdown=soon"}); err == nil {
		t.Error("--delay-shutdown=soon parsed")
	}
	args := Args(&Netexec{Options: netexec.Options{DelayShutdown: 100 * time.Second}})
	if !slices.Contains(args, "--delay-shutdown=1m40s") {
		t.Errorf("Args = %q, want --delay-shutdown=1m40s", args)
	}
	if args := Args(&Netexec{}); slices.ContainsFunc(args, func(a string) bool { return len(a) > 16 && a[:16] == "--delay-shutdown" }) {
		t.Errorf("Args of the zero options = %q: no --delay-shutdown", args)
	}
}
