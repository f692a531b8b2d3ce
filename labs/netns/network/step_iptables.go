package network

import (
	"bytes"
	"fmt"
	"strings"
)

// IptablesRestore loads rules into a lab namespace with iptables-restore
// --noflush, run through `ip netns exec`. Binary is the backend's
// iptables-restore (see topology.IPTablesBackend.RestoreCommand), so that
// the lab's rules and kube-proxy's live in the same backend.
//
//	ip netns exec <NS> <Binary> -w 5 --noflush <<'EOF'
//	<Rules>
//	EOF
type IptablesRestore struct {
	NS, Binary string
	// Rules is iptables-restore input: "*table", chains, rules, "COMMIT".
	Rules string
}

func (s IptablesRestore) Namespace() string { return s.NS }
func (s IptablesRestore) Command() string {
	return fmt.Sprintf("ip netns exec %s %s -w 5 --noflush <<'EOF'\n%sEOF", s.NS, s.Binary, s.Rules)
}

func (s IptablesRestore) apply(x *executor) error {
	cmd := NetnsCommand(s.NS, s.Binary, "-w", "5", "--noflush")
	cmd.Stdin = strings.NewReader(s.Rules)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", s.Binary, err, strings.TrimSpace(out.String()))
	}
	return nil
}
