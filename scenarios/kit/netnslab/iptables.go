package netnslab

// IPTablesSave returns `iptables-save -t table` (with -c: counters) run in a
// node of the lab, with the lab's iptables backend.
func (l *Lab) IPTablesSave(node, table string, counters bool) (string, error) {
	args := []string{l.Topology.Spec.Proxy.IPTablesBackend.Command() + "-save", "-t", table}
	if counters {
		args = append(args, "-c")
	}
	return l.Run(node, args...)
}
