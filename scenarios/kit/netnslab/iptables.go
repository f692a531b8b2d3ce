package netnslab

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// IPTablesSave returns `iptables-save -t table` (with -c: counters) run in a
// node of the lab, with the lab's iptables backend; with family IPv6
// (the one optional argument) that backend's ip6tables-save.
func (l *Lab) IPTablesSave(node, table string, counters bool, family ...corev1.IPFamily) (string, error) {
	command := l.Topology.Spec.Proxy.IPTablesBackend.Command()
	if len(family) > 0 && kit.IsIPv6(family[0]) {
		command = "ip6" + strings.TrimPrefix(command, "ip")
	}
	args := []string{command + "-save", "-t", table}
	if counters {
		args = append(args, "-c")
	}
	return l.Run(node, args...)
}
