package proxy

import (
	"bytes"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/model"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestDefaultConfigRulesGolden is the whole iptables-restore payload the
// iptables mode writes for seed 004's httpserver NodePort (one endpoint
// on another node) under a configuration that sets nothing but the
// cluster CIDR, i.e. upstream's defaults: localhost node ports on, so
// KUBE-FIREWALL guards 127.0.0.0/8 and the KUBE-NODEPORTS jump matches any
// local destination, as in the seeds' iptables-save output.
func TestDefaultConfigRulesGolden(t *testing.T) {
	sys := &fakeSysctls{values: map[string]int{sysctlRouteLocalnet: 0, sysctlNFConntrackTCPBeLiberal: 0}}
	opts, err := setUpIPTablesKernel(parseConfig(t, ""), sys, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	r, err := iptables.NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	tcp := corev1.ProtocolTCP
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "httpserver"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.0.40",
			Ports: []corev1.ServicePort{{Name: "http", Protocol: tcp, Port: 3000, NodePort: 30000}}},
	}
	name, port, other := "http", int32(3000), "hostb"
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: "httpserver-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: "httpserver"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Protocol: &tcp, Port: &port}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.81.180"}, NodeName: &other}},
	}
	got := r.Render(model.Build([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{slice}, "hosta")).Payload()

	path := filepath.Join("testdata", "default_config_nodeport.golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test -run %s -update` to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("payload differs from %s (rerun with -update if the change is intended):\ngot:\n%s", path, got)
	}
}
