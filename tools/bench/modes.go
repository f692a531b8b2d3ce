package bench

import (
	"fmt"
	"strings"

	"github.com/svclab/svclab/labs/netns/topology"
)

// Mode is one way of programming the node that the benchmark measures: a
// kube-proxy mode and, for iptables, the backend the lab's proxy uses.
type Mode struct {
	// Name is how the command line and the results call it.
	Name string
	// ProxyMode is the mode field of the kube-proxy ConfigMap.
	ProxyMode string
	// Backend is the lab file's spec.proxy.iptablesBackend.
	Backend topology.IPTablesBackend
}

// Modes are the modes the benchmark knows, in the order it lists them.
//
// "iptables" is the lab's default: the host's `iptables`, whichever
// backend the host's alternatives point it at (nf_tables on Debian 12).
var Modes = []Mode{
	{Name: "iptables", ProxyMode: "iptables", Backend: topology.BackendDefault},
	{Name: "iptables-legacy", ProxyMode: "iptables", Backend: topology.BackendLegacy},
	{Name: "iptables-nft", ProxyMode: "iptables", Backend: topology.BackendNFT},
	{Name: "nftables", ProxyMode: "nftables"},
	{Name: "ipvs", ProxyMode: "ipvs"},
}

// ParseModes reads a comma-separated list of mode names. Each name is
// taken once, in the order given.
func ParseModes(s string) ([]Mode, error) {
	var out []Mode
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		m, ok := lookupMode(name)
		if !ok {
			return nil, fmt.Errorf("--modes: %q: unknown mode (want %s)", name, modeNames())
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, m)
		}
	}
	return out, nil
}

func lookupMode(name string) (Mode, bool) {
	for _, m := range Modes {
		if m.Name == name {
			return m, true
		}
	}
	return Mode{}, false
}

func modeNames() string {
	var names []string
	for _, m := range Modes {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}
