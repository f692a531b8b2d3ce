package netns

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

// reportDeleted prints, as kubectl delete does, the objects next no longer
// has (namespaces: that next has Terminating), pods apart (they have lines
// of their own when they are gone).
func reportDeleted(out io.Writer, cur, next *labstore.State) {
	for _, o := range cur.Namespaces {
		if n := next.Namespace(o.Name); o.DeletionTimestamp == nil && (n == nil || n.DeletionTimestamp != nil) {
			fmt.Fprintf(out, "namespace %q deleted\n", o.Name)
		}
	}
	type key struct{ kind, ns, name string }
	have := map[key]bool{}
	var order []key
	add := func(set map[key]bool, list *[]key, kind, ns, name string) {
		k := key{kind, ns, name}
		set[k] = true
		if list != nil {
			*list = append(*list, k)
		}
	}
	collect := func(st *labstore.State, set map[key]bool, list *[]key) {
		for _, o := range st.Services {
			add(set, list, "service", o.Namespace, o.Name)
		}
		for _, o := range st.ConfigMaps {
			add(set, list, "configmap", o.Namespace, o.Name)
		}
		for _, o := range st.Deployments {
			add(set, list, "deployment.apps", o.Namespace, o.Name)
		}
		for _, o := range st.ReplicaSets {
			add(set, list, "replicaset.apps", o.Namespace, o.Name)
		}
		for _, o := range st.StatefulSets {
			add(set, list, "statefulset.apps", o.Namespace, o.Name)
		}
		for _, o := range st.DaemonSets {
			add(set, list, "daemonset.apps", o.Namespace, o.Name)
		}
		for _, o := range st.EndpointSlices {
			if o.Labels["endpointslice.kubernetes.io/managed-by"] != "endpointslice-controller.k8s.io" {
				add(set, list, "endpointslice.discovery.k8s.io", o.Namespace, o.Name)
			}
		}
	}
	collect(next, have, nil)
	collect(cur, map[key]bool{}, &order)
	for _, k := range order {
		if !have[k] {
			fmt.Fprintf(out, "%s %q deleted\n", k.kind, k.name)
		}
	}
}

// reportServicesCreated prints a line, with its addresses, for every
// Service next has and cur had not. cur's Services are looked up in a set:
// a lab holds thousands, and a lookup per Service in cur's list made this
// step O(n²) (seconds at 10,000 Services).
func (l *Lab) reportServicesCreated(out io.Writer, cur, next *labstore.State) {
	type key struct{ ns, name string }
	had := make(map[key]bool, len(cur.Services))
	for _, svc := range cur.Services {
		had[key{svc.Namespace, svc.Name}] = true
	}
	for _, svc := range next.Services {
		if !had[key{svc.Namespace, svc.Name}] {
			fmt.Fprintf(out, "service/%s created: %s\n", svc.Name, l.describeService(svc))
		}
	}
}
