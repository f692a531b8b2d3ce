package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// walkCommands calls f on every command under root, with whether it or a
// parent is hidden.
func walkCommands(root *cobra.Command, f func(cmd *cobra.Command, hidden bool)) {
	var walk func(c *cobra.Command, hidden bool)
	walk = func(c *cobra.Command, hidden bool) {
		hidden = hidden || c.Hidden
		f(c, hidden)
		for _, sub := range c.Commands() {
			walk(sub, hidden)
		}
	}
	walk(root, false)
}

// TestEveryCommandHasAnExample: every command a user sees in the help
// shows how it is typed (the root shows the first steps instead).
func TestEveryCommandHasAnExample(t *testing.T) {
	walkCommands(newRoot(), func(cmd *cobra.Command, hidden bool) {
		if hidden || !cmd.HasParent() {
			return
		}
		if strings.TrimSpace(cmd.Example) == "" {
			t.Errorf("%s: no Example", cmd.CommandPath())
		} else if !strings.HasPrefix(cmd.Example, "  ") || strings.HasSuffix(cmd.Example, "\n") {
			t.Errorf("%s: Example %q: want lines indented by two spaces, no newline at the end (cobra's layout)", cmd.CommandPath(), cmd.Example)
		}
	})
}

// TestInternalCommandsAreHidden: what svclab runs itself is not offered
// to the user.
func TestInternalCommandsAreHidden(t *testing.T) {
	for _, name := range []string{"netexec", "proxy", "supervise", "node", "cni", "dns", "loadbalancer"} {
		cmd, _, err := newRoot().Find([]string{name})
		if err != nil || cmd.Name() != name {
			t.Errorf("%s: not found (%v)", name, err)
		} else if !cmd.Hidden {
			t.Errorf("%s is svclab's own and not hidden", name)
		}
	}
}

// TestRequireRoot: one line naming the command, before it runs, for a
// command that needs root; nothing for those that do not, or under root.
func TestRequireRoot(t *testing.T) {
	defer func(f func() int) { euid = f }(euid)
	euid = func() int { return 65534 }
	root := newRoot()
	for args, want := range map[string]string{
		"create lab":     "svclab create lab needs root: run it with sudo",
		"apply":          "svclab apply needs root: run it with sudo",
		"workshop check": "svclab workshop check needs root: run it with sudo",
		"tour nodeport":  "svclab tour nodeport needs root: run it with sudo",
		"create cluster": "svclab create cluster needs root: run it with sudo",
		"version":        "",
		"workshop list":  "",
		"workshop class": "",
		"conformance":    "",
		"netexec":        "", // hidden: svclab runs it (as root) itself
		"proxy":          "",
	} {
		cmd, _, err := root.Find(strings.Fields(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		got := ""
		if err := requireRoot(cmd, nil); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s as a user: %q, want %q", args, got, want)
		}
	}
	if err := requireRoot(root, nil); err != nil {
		t.Errorf("svclab alone as a user: %v", err)
	}
	euid = func() int { return 0 }
	if cmd, _, _ := root.Find([]string{"create", "lab"}); requireRoot(cmd, nil) != nil {
		t.Error("create lab as root: refused")
	}
}

// TestWithoutRootNamesCommands: the list of commands that need no root
// names commands that exist (cobra's own completion commands aside).
func TestWithoutRootNamesCommands(t *testing.T) {
	root := newRoot()
	for path := range withoutRoot {
		if strings.HasPrefix(path, "__") || strings.HasPrefix(path, "completion") || path == "help" {
			continue
		}
		if cmd, _, err := root.Find(strings.Fields(path)); err != nil || subPath(cmd) != path {
			t.Errorf("withoutRoot names %q, which is not a command (%v)", path, err)
		}
	}
}
