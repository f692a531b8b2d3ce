package vm

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// shellQuote quotes s for a POSIX shell: 'it'\”s'.
func shellQuote(s string) string {
	if s != "" && safeWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var (
	safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)
	envName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// commandScript is the script the guest runs (with an empty environment):
// it exports env, changes to dir (made when missing) and execs the command.
// A directory that cannot be entered ends it with 125.
func commandScript(command []string, env map[string]string, dir string) (string, error) {
	if len(command) == 0 {
		return "", fmt.Errorf("vm: no command")
	}
	if !strings.HasPrefix(dir, "/") {
		return "", fmt.Errorf("vm: working directory %q is not absolute", dir)
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		if !envName.MatchString(k) {
			return "", fmt.Errorf("vm: bad environment variable name %q", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# written by svclab's vm package: the command to run in the guest\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "export %s=%s\n", k, shellQuote(env[k]))
	}
	fmt.Fprintf(&b, "mkdir -p %s 2>/dev/null; cd %s || exit 125\n", shellQuote(dir), shellQuote(dir))
	b.WriteString("exec")
	for _, a := range command {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString("\n")
	return b.String(), nil
}

// sharesFile lists the shares for the guest's init, one a line:
// TAG<tab>GUEST-PATH<tab>ro|rw.
func sharesFile(shares []share9p, guestPaths []string) string {
	var b strings.Builder
	for i, s := range shares {
		mode := "rw"
		if s.ReadOnly {
			mode = "ro"
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", s.Tag, guestPaths[i], mode)
	}
	return b.String()
}
