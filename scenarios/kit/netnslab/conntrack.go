package netnslab

import (
	"github.com/svclab/svclab/labs/agents/conntrack"
)

// Conntrack reads the conntrack table of a lab host over netlink (what
// `conntrack -L` shows, NAT status bits included).
func (l *Lab) Conntrack(host string) ([]conntrack.Flow, error) {
	ns, err := l.Namespace(host)
	if err != nil {
		return nil, err
	}
	return conntrack.Dump(ns)
}
