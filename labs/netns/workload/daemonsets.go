package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/svclab/svclab/internal/labstore"
)

// applyDaemonSet validates a DaemonSet as the API server does and makes
// one pod on every node whose labels match the template's nodeSelector.
// A lab's nodes are all workers: none carries the control-plane taint, so
// every node is eligible.
func (c Cluster) applyDaemonSet(st *labstore.State, ds *appsv1.DaemonSet, source string) error {
	defaultNamespace(&ds.ObjectMeta)
	ctl := podController{kind: "DaemonSet", meta: ds.ObjectMeta, selector: ds.Spec.Selector, template: &ds.Spec.Template}
	if err := ctl.validate(source); err != nil {
		return err
	}
	st.DaemonSets = replaceOrAdd(st.DaemonSets, ds, sameName[*appsv1.DaemonSet](ds.ObjectMeta))
	return c.reconcileDaemonSet(st, ds, source)
}

// reconcileDaemonSet keeps one live pod, named <daemonset>-<5 random
// characters>, on each eligible node: pods of an older template or on a
// node that no longer matches are removed, missing ones made (a
// terminating pod does not count, as upstream's controller skips it).
func (c Cluster) reconcileDaemonSet(st *labstore.State, ds *appsv1.DaemonSet, source string) error {
	ensureUID("DaemonSet", &ds.ObjectMeta)
	revision := hashOf(ds.Spec.Template)
	live, _ := ownedPods(st, "DaemonSet", ds.ObjectMeta)
	sel := labels.SelectorFromSet(ds.Spec.Template.Spec.NodeSelector)
	has := map[string]bool{}
	var drop []*corev1.Pod
	for _, p := range live {
		node, ok := c.node(p.Spec.NodeName)
		if !ok || !sel.Matches(node.Labels()) || p.Labels[revisionLabel] != revision || has[node.Name] {
			drop = append(drop, p)
			continue
		}
		has[node.Name] = true
	}
	removePods(st, drop)
	for _, node := range c.Nodes {
		if has[node.Name] || !sel.Matches(node.Labels()) {
			continue
		}
		name := c.uniquePodName(st, generateNameBase(ds.Name+"-"))
		pod := newPod("DaemonSet", ds.ObjectMeta, &ds.Spec.Template, name, map[string]string{
			revisionLabel:             revision,
			"pod-template-generation": "1",
		})
		pod.Spec.NodeName = node.Name
		if err := c.applyPod(st, pod, source); err != nil {
			return err
		}
	}
	return nil
}

func (c Cluster) node(name string) (Node, bool) {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}
