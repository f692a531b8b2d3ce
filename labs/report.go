package labs

import (
	"fmt"
	"io"

	"github.com/svclab/svclab/internal/labstore"
)

// reportCreated prints, as kubectl does, the objects of the kinds svclab
// took on for Service networking that next has and cur had not (pods and
// Services have lines of their own, with their IPs).
func reportCreated(out io.Writer, cur, next *labstore.State) {
	for _, o := range next.Namespaces {
		if cur.Namespace(o.Name) == nil {
			fmt.Fprintf(out, "namespace/%s created\n", o.Name)
		}
	}
	type key struct{ ns, name string }
	had := map[string]map[key]bool{}
	mark := func(kind, ns, name string) {
		if had[kind] == nil {
			had[kind] = map[key]bool{}
		}
		had[kind][key{ns, name}] = true
	}
	for _, o := range cur.ReplicaSets {
		mark("replicaset.apps", o.Namespace, o.Name)
	}
	for _, o := range cur.StatefulSets {
		mark("statefulset.apps", o.Namespace, o.Name)
	}
	for _, o := range cur.DaemonSets {
		mark("daemonset.apps", o.Namespace, o.Name)
	}
	for _, o := range cur.EndpointSlices {
		mark("endpointslice.discovery.k8s.io", o.Namespace, o.Name)
	}
	report := func(kind, ns, name string) {
		if !had[kind][key{ns, name}] {
			fmt.Fprintf(out, "%s/%s created\n", kind, name)
		}
	}
	for _, o := range next.ReplicaSets {
		report("replicaset.apps", o.Namespace, o.Name)
	}
	for _, o := range next.StatefulSets {
		report("statefulset.apps", o.Namespace, o.Name)
	}
	for _, o := range next.DaemonSets {
		report("daemonset.apps", o.Namespace, o.Name)
	}
	for _, o := range next.EndpointSlices {
		if o.Labels["endpointslice.kubernetes.io/managed-by"] != "endpointslice-controller.k8s.io" {
			report("endpointslice.discovery.k8s.io", o.Namespace, o.Name)
		}
	}
}
