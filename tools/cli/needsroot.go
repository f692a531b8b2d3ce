package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// withoutRoot lists the user-facing commands that work without root, by
// their path under svclab: they read nothing of /run/svclab (mode 0700,
// root's), make no network namespace and talk to no dockerd of svclab's.
// Every other runnable command that is not hidden builds, changes or reads
// labs (network namespaces, the lab's store under /run/svclab/labs),
// svclab's dockerd or its VM, and says first that it needs root (see
// requireRoot). Hidden commands are svclab's own, run by svclab as root.
var withoutRoot = map[string]bool{
	"version":               true,
	"completion":            true,
	"help":                  true,
	"conformance":           true, // talks to a cluster through a kubeconfig
	"conformance rbac":      true, // prints YAML
	"conformance cleanup":   true, // talks to a cluster through a kubeconfig
	"conformance manifest":  true, // prints YAML
	"image build":           true, // reads two binaries, writes a file
	"image push":            true, // and talks to a registry
	"workshop list":         true,
	"get examples":          true, // lists what the binary embeds
	"workshop class":        true, // reads the students' reports it is given
	"completion bash":       true,
	"completion zsh":        true,
	"completion fish":       true,
	"completion powershell": true,
	"__complete":            true, // cobra's completion helper: a missing lab store completes nothing
	"__completeNoDesc":      true,
}

// euid is the effective user ID requireRoot tests (a variable for tests).
var euid = os.Geteuid

// requireRoot is the root command's PersistentPreRunE: a command that
// needs root, run by another user, fails before it does anything, in one
// line: "svclab create lab needs root: run it with sudo".
func requireRoot(cmd *cobra.Command, _ []string) error {
	if !needsRoot(cmd) || euid() == 0 {
		return nil
	}
	return fmt.Errorf("%s needs root: run it with sudo", cmd.CommandPath())
}

// needsRoot says whether cmd (a runnable command) needs root.
func needsRoot(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Hidden {
			return false
		}
	}
	return cmd.HasParent() && cmd.Runnable() && !withoutRoot[subPath(cmd)]
}

// subPath is cmd's path below the root command: "create lab".
func subPath(cmd *cobra.Command) string {
	path := cmd.CommandPath()
	if cmd.HasParent() {
		path = strings.TrimPrefix(path, cmd.Root().Name()+" ")
	}
	return path
}
