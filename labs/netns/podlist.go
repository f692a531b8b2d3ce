package netns

import (
	"time"

	"github.com/svclab/svclab/internal/labstore"
)

// PodRow is one pod as `kubectl get pods -o wide` shows it: the node
// proxies (kube-system/kube-proxy-<node>) and the lab's pods.
type PodRow struct {
	Namespace, Name string
	// Ready is "1/1" while the pod's process runs, "0/1" otherwise.
	Ready string
	// Status is Running, CrashLoopBackOff, Error, Completed,
	// ContainerCreating (no report yet), Unknown (its supervisor is gone)
	// or Terminating (being deleted).
	Status   string
	Restarts int
	// LastExit is when the process last ended (zero if it never did).
	LastExit time.Time
	// Created is when the pod's supervisor started (zero when the pod runs
	// no process).
	Created  time.Time
	IP, Node string
}

// Pods lists the lab's pods, the node proxies first, with the state their
// supervisors report.
func (l *Lab) Pods() ([]PodRow, error) {
	var rows []PodRow
	for _, n := range l.Topology.Spec.Nodes {
		row, err := l.podRow(proxyNamespace, proxyPodName(n.Name), true)
		if err != nil {
			return nil, err
		}
		row.IP, row.Node = n.IP.Addr().String(), n.Name
		rows = append(rows, row)
	}
	objs, _, err := l.Store.ReadObjects()
	if err != nil {
		return nil, err
	}
	for _, p := range objs.Pods {
		row, err := l.podRow(p.Namespace, p.Name, len(serverPorts(p)) > 0)
		if err != nil {
			return nil, err
		}
		row.IP, row.Node = p.Status.PodIP, p.Spec.NodeName
		if p.DeletionTimestamp != nil {
			row.Status = "Terminating" // as kubectl shows a pod being deleted
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (l *Lab) podRow(namespace, name string, supervised bool) (PodRow, error) {
	row := PodRow{Namespace: namespace, Name: name, Ready: "0/1"}
	if !supervised {
		row.Ready, row.Status = "1/1", labstore.StateRunning
		if l.missingPodNamespace(name) != "" {
			row.Ready, row.Status = "0/1", NetworkNamespaceMissing
		}
		return row, nil
	}
	ps, err := l.podState(name)
	if err != nil {
		return row, err
	}
	row.Restarts, row.Created = ps.Restarts, ps.CreatedAt
	if t := ps.LastTermination; t != nil {
		row.LastExit = t.FinishedAt
	}
	switch {
	case ps.SupervisorGone:
		row.Status = "Unknown"
	case !ps.Found:
		row.Status = "ContainerCreating"
	case ps.running():
		row.Ready, row.Status = "1/1", labstore.StateRunning
	case ps.Reason != "":
		row.Status = ps.Reason
	default:
		row.Status = ps.State
	}
	return row, nil
}
