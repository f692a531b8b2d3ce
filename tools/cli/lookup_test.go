package cli

import (
	"testing"

	"github.com/svclab/svclab/labs/agents/selfexec"
)

// The command line the conformance suite runs in a pod is one this CLI
// takes: the subcommand, --type and the name.
func TestLookupCommandLineParses(t *testing.T) {
	for _, c := range []*selfexec.Lookup{{Name: "web"}, {Name: "ext", Type: "CNAME"}} {
		args := selfexec.Args(c)
		cmd, rest, err := newRoot().Find(args)
		if err != nil || cmd.CommandPath() != "svclab lookup" {
			t.Fatalf("%q: %v runs %v", args, err, cmd)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if got := cmd.Flags().Args(); len(got) != 1 || got[0] != c.Name {
			t.Errorf("%q: positional arguments %q, want [%s]", args, got, c.Name)
		}
		if got, _ := cmd.Flags().GetString("type"); got != c.Type {
			t.Errorf("%q: --type %q, want %q", args, got, c.Type)
		}
	}
}
