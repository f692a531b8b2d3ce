package proxy

import (
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/model"
)

// TestDefaultConfigRulesGolden is the whole iptables-restore payload the
// iptables mode writes for seed 004's httpserver NodePort (one endpoint
// on another node) under a configuration that sets nothing but the
// cluster CIDR, i.e. upstream's defaults: localhost node ports on, so
// KUBE-FIREWALL guards 127.0.0.0/8 and the KUBE-NODEPORTS jump matches any
// local destination, as in the seeds' iptables-save output.
func TestDefaultConfigRulesGolden(t *testing.T) {
	sys := &fakeSysctls{values: map[string]int{sysctlRouteLocalnet: 0, sysctlNFConntrackTCPBeLiberal: 0}}
	opts, err := setUpIPTablesKernel(parseConfig(t, ""), "", sys, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	r, err := iptables.NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	tcp := corev1.ProtocolTCP
	svc := fixtures.Service("default", "httpserver", "10.96.0.40", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 3000, 30000)}, fixtures.NodePortType)
	slice := fixtures.EndpointSlice("default", "httpserver", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 3000)}, fixtures.Endpoint("10.244.81.180", "hostb"))
	got := r.Render(model.Build([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{slice}, "hosta")).Payload()

	golden.Check(t, "default_config_nodeport.golden", got)
}
