package netns

import (
	"fmt"
)

// PodLog returns the log file of a pod's process: the node proxy of
// kube-system/kube-proxy-<node> writes logs/<node>-kube-proxy.log, a pod's
// server logs/<pod>.log (with its kubelet's or supervisor's lines about
// starts and exits). A pod that runs no server (no containerPorts) has none.
func (l *Lab) PodLog(namespace, name string) (string, error) {
	if namespace == proxyNamespace {
		for _, n := range l.Topology.Spec.Nodes {
			if proxyPodName(n.Name) == name {
				return l.proxyLog(n.Name), nil
			}
		}
	}
	objs, _, err := l.Store.ReadObjects()
	if err != nil {
		return "", err
	}
	for _, p := range objs.Pods {
		if p.Namespace != namespace || p.Name != name {
			continue
		}
		if len(serverPorts(p)) == 0 {
			return "", fmt.Errorf("pod %s/%s runs no process (it has no TCP containerPort), so it has no log", namespace, name)
		}
		return l.Store.Confine("logs", name+".log")
	}
	for _, p := range objs.Pods {
		if p.Name == name {
			return "", fmt.Errorf("pods %q not found in namespace %s (it is in %s: -n %s)", name, namespace, p.Namespace, p.Namespace)
		}
	}
	for _, n := range l.Topology.Spec.Nodes {
		if proxyPodName(n.Name) == name {
			return "", fmt.Errorf("pods %q not found in namespace %s (it is in %s: -n %s)", name, namespace, proxyNamespace, proxyNamespace)
		}
	}
	return "", fmt.Errorf("pods %q not found in namespace %s", name, namespace)
}
