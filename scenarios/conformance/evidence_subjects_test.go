package conformance

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// subjectWorkspace is a workspace the subjects only carry.
type subjectWorkspace struct{ kit.Workspace }

// TestEvidenceSubjects: a pod's subject is the Service on the pod's node,
// traced to the cluster IP — and, for a Service without one (headless,
// ExternalName), looked up by name with no traced connection; an outside
// subject enters at the node and is traced to its node port; and either
// is no subject (no evidence, said so) when the spec failed before its
// Service or client was read.
func TestEvidenceSubjects(t *testing.T) {
	ws := subjectWorkspace{}
	probe := podClient(corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: corev1.PodSpec{NodeName: "node1"}})
	svc := evidenceService("ns", "web", "10.96.0.10", 80, 30080)
	headless := evidenceService("ns", "web-headless", corev1.ClusterIPNone, 80, 0)
	external := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ext"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "x.example.com"}}
	node2 := kit.Node{Name: "node2", IP: netip.MustParseAddr("192.168.0.3")}

	for _, tt := range []struct {
		name  string
		got   evidenceSubject
		ready bool
		node  string
		from  kit.Client
		to    string
	}{
		{"pod to cluster IP", clusterIPEvidence(ws, svc, probe, 80), true, "node1", probe, "10.96.0.10:80"},
		{"headless", clusterIPEvidence(ws, headless, probe, 80), true, "node1", probe, "invalid AddrPort"},
		{"ExternalName", clusterIPEvidence(ws, external, probe, 80), true, "node1", probe, "invalid AddrPort"},
		{"outside into a node port", nodePortEntryEvidence(ws, svc, node2), true, "node2", kit.Client{Node: "node2"}, "192.168.0.3:30080"},
		{"Service not read", clusterIPEvidence(ws, nil, probe, 80), false, "", kit.Client{}, "invalid AddrPort"},
		{"probe not read", clusterIPEvidence(ws, svc, podClient(corev1.Pod{}), 80), false, "", kit.Client{}, "invalid AddrPort"},
		{"nodes not read", nodePortEntryEvidence(ws, svc, kit.Node{}), false, "", kit.Client{}, "invalid AddrPort"},
		{"no port", nodePortEntryEvidence(ws, external, node2), false, "", kit.Client{}, "invalid AddrPort"},
	} {
		if tt.got.ready() != tt.ready || tt.got.node != tt.node || tt.got.from != tt.from || tt.got.to.String() != tt.to {
			t.Errorf("%s: ready %v, node %q, from %+v, to %s; want %v, %q, %+v, %s",
				tt.name, tt.got.ready(), tt.got.node, tt.got.from, tt.got.to, tt.ready, tt.node, tt.from, tt.to)
		}
	}
}
