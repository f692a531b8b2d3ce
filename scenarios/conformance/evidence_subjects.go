package conformance

import (
	"net/netip"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// The evidence subjects of the Service behaviour families (evidence.go):
// what each family's connections are about, built from what its
// BeforeAll read. Each returns the zero subject (no evidence, saying
// so) when what it needs was not read: the spec failed before.

// clusterIPEvidence is a pod's connections to a Service's cluster IP: the
// Service on the pod's node, traced from the pod to the cluster IP and
// port. A Service without a cluster IP (headless, ExternalName) has its
// rules and conntrack entries looked up by name and no traced connection.
func clusterIPEvidence(ws kit.Workspace, svc *corev1.Service, from kit.Client, port uint16) evidenceSubject {
	if svc == nil || from.Node == "" {
		return evidenceSubject{}
	}
	subject := evidenceSubject{ws: ws, svc: svc, node: from.Node, from: from}
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil {
		subject.to = netip.AddrPortFrom(ip, port)
	}
	return subject
}

// nodePortEntryEvidence is connections from outside the pod network to a
// node's NodePort: the Service on that node, traced from a client outside
// the pod network that enters there (the lab's client; on a cluster the
// node's host network) to the node's address and the Service's first
// node port.
func nodePortEntryEvidence(ws kit.Workspace, svc *corev1.Service, entry kit.Node) evidenceSubject {
	if svc == nil || entry.Name == "" || len(svc.Spec.Ports) == 0 {
		return evidenceSubject{}
	}
	return evidenceSubject{ws: ws, svc: svc, node: entry.Name, from: kit.Client{Node: entry.Name},
		to: nodePortOf(entry, svc.Spec.Ports[0].NodePort)}
}

// podClient is a pod as a client: its connections enter at its node.
func podClient(p corev1.Pod) kit.Client { return kit.Client{Pod: p.Name, Node: p.Spec.NodeName} }

// specMentions says whether the running spec's own text contains word: how
// a family whose specs are about different Services (or nodes) picks the
// one the failed spec used.
func specMentions(word string) bool {
	return strings.Contains(CurrentSpecReport().LeafNodeText, word)
}
