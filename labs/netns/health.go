package netns

import (
	"fmt"
	"strings"
)

// Health says in a few words whether every node's proxy runs and is
// healthy, or which command is under way or was interrupted.
func (l *Lab) Health() string {
	if s := Interrupted(l.Name()); s != "" {
		return s
	}
	statuses, err := l.Store.ProxyStatuses()
	if err != nil {
		return "unknown: " + err.Error()
	}
	var problems []string
	for _, n := range l.Topology.Spec.Nodes {
		st, ok := statuses[n.Name]
		ps, err := l.podState(proxyPodName(n.Name))
		if err != nil {
			return "unknown: " + err.Error()
		}
		switch {
		case ps.failure() != "":
			why := ps.failure()
			if ok && st.Error != "" {
				why += ": " + st.Error
			}
			verb := "is" // "is CrashLoopBackOff: last exit …"
			if ps.SupervisorGone {
				verb = "does not run:"
			}
			problems = append(problems, fmt.Sprintf("%s: %s %s %s", n.Name, proxyPodName(n.Name), verb, why))
		case !ps.running():
			problems = append(problems, n.Name+": proxy not running")
		case !ok || st.PID != ps.PID:
			problems = append(problems, n.Name+": proxy not synced yet")
		case !st.Healthy:
			problems = append(problems, fmt.Sprintf("%s: proxy unhealthy: %s", n.Name, st.Error))
		}
	}
	if len(problems) == 0 {
		return "running"
	}
	return "degraded (" + strings.Join(problems, "; ") + ")"
}

// ProxyKernel says which mode and kernel interface the proxies use, as the
// first node's proxy reports it ("iptables v1.8.9 (nf_tables)").
func (l *Lab) ProxyKernel() string {
	statuses, err := l.Store.ProxyStatuses()
	if err != nil || len(l.Topology.Spec.Nodes) == 0 {
		return "-"
	}
	st, ok := statuses[l.Topology.Spec.Nodes[0].Name]
	if !ok || st.Mode == "" {
		return "-"
	}
	if st.Backend == "" {
		return st.Mode
	}
	return st.Mode + " " + st.Backend
}
