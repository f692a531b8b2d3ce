package proxy

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/server"
)

// TestHealthChecks: one health check per Service that has a port, with its
// ready local endpoints counted by IP across the Service's ports.
func TestHealthChecks(t *testing.T) {
	ep := func(ip string, port int32, ready, local bool) model.Endpoint {
		return model.Endpoint{IP: netip.MustParseAddr(ip), Port: port, Ready: ready, IsLocal: local}
	}
	name := func(svc, port string) model.ServicePortName {
		return model.ServicePortName{Namespace: "default", Name: svc, Port: port, Protocol: "TCP"}
	}
	snap := &model.Snapshot{ServicePorts: []*model.ServicePort{
		{Name: name("lb", "http"), HealthCheckNodePort: 30001, Endpoints: []model.Endpoint{
			ep("10.0.0.1", 80, true, true), ep("10.0.0.2", 80, false, true), ep("10.0.1.1", 80, true, false)}},
		{Name: name("lb", "https"), HealthCheckNodePort: 30001, Endpoints: []model.Endpoint{
			ep("10.0.0.1", 443, true, true), ep("10.0.0.3", 443, true, true)}},
		{Name: name("empty", ""), HealthCheckNodePort: 30002},
		{Name: name("plain", ""), Endpoints: []model.Endpoint{ep("10.0.0.1", 80, true, true)}},
	}}
	want := map[int32]server.ServiceHealthCheck{
		30001: {Namespace: "default", Name: "lb", LocalEndpoints: 2},
		30002: {Namespace: "default", Name: "empty", LocalEndpoints: 0},
	}
	if got := healthChecks(snap); !reflect.DeepEqual(got, want) {
		t.Errorf("healthChecks = %v, want %v", got, want)
	}
}
