package workload

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/podnet"
)

// lbLab is the test lab with a load balancer pool of three addresses.
var lbLab = func() Cluster {
	c := lab
	c.LoadBalancerPool = podnet.AddrRange{First: netip.MustParseAddr("192.168.100.10"), Last: netip.MustParseAddr("192.168.100.12")}
	return c
}()

// tryApply decodes and applies a manifest, returning apply's error.
func tryApply(c Cluster, st *labstore.State, manifest string) (*labstore.State, error) {
	m, err := Decode([]byte(manifest), "t.yaml")
	if err != nil {
		return nil, err
	}
	return c.Apply(st, m, "t.yaml")
}

const serviceTypes = `
apiVersion: v1
kind: Service
metadata: {name: lb}
spec:
  type: LoadBalancer
  selector: {app: web}
  loadBalancerSourceRanges: [192.168.55.0/24]
  externalTrafficPolicy: Local
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: ext}
spec:
  selector: {app: web}
  externalIPs: [203.0.113.7]
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: cname}
spec:
  type: ExternalName
  externalName: example.com.
---
apiVersion: v1
kind: Service
metadata: {name: sticky}
spec:
  selector: {app: web}
  sessionAffinity: ClientIP
  ports: [{port: 80}]
`

func TestServiceTypesDefaultsAndAllocation(t *testing.T) {
	st, err := tryApply(lbLab, &labstore.State{}, serviceTypes)
	if err != nil {
		t.Fatal(err)
	}
	lb := st.Service("default", "lb")
	if got := lb.Status.LoadBalancer.Ingress; len(got) != 1 || got[0].IP != "192.168.100.10" || got[0].IPMode == nil || *got[0].IPMode != corev1.LoadBalancerIPModeVIP {
		t.Errorf("lb ingress = %+v, want 192.168.100.10 VIP", got)
	}
	if lb.Spec.Ports[0].NodePort != NodePortMin || lb.Spec.HealthCheckNodePort != NodePortMin+1 {
		t.Errorf("lb node port %d, health check node port %d", lb.Spec.Ports[0].NodePort, lb.Spec.HealthCheckNodePort)
	}
	if a := lb.Spec.AllocateLoadBalancerNodePorts; a == nil || !*a {
		t.Error("allocateLoadBalancerNodePorts not defaulted to true")
	}
	ext := st.Service("default", "ext")
	if ext.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || ext.Spec.Ports[0].NodePort != 0 {
		t.Errorf("ext: policy %q node port %d", ext.Spec.ExternalTrafficPolicy, ext.Spec.Ports[0].NodePort)
	}
	cname := st.Service("default", "cname")
	if cname.Spec.ClusterIP != "" || len(cname.Spec.ClusterIPs) != 0 || cname.Spec.InternalTrafficPolicy != nil {
		t.Errorf("cname: cluster IP %q %v, internal policy %v", cname.Spec.ClusterIP, cname.Spec.ClusterIPs, cname.Spec.InternalTrafficPolicy)
	}
	for _, s := range st.EndpointSlices {
		if strings.HasPrefix(s.Name, "cname") {
			t.Errorf("ExternalName Service got EndpointSlice %s", s.Name)
		}
	}
	sticky := st.Service("default", "sticky")
	if c := sticky.Spec.SessionAffinityConfig; c == nil || *c.ClientIP.TimeoutSeconds != DefaultAffinitySeconds {
		t.Errorf("sticky: affinity config %+v, want timeout %d", c, DefaultAffinitySeconds)
	}
	if p := sticky.Spec.InternalTrafficPolicy; p == nil || *p != corev1.ServiceInternalTrafficPolicyCluster {
		t.Errorf("sticky: internal policy %v", p)
	}

	// Re-applying keeps every allocation.
	again, err := tryApply(lbLab, st, serviceTypes)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := again.Service("default", "lb"), lb; a.Status.LoadBalancer.Ingress[0].IP != b.Status.LoadBalancer.Ingress[0].IP ||
		a.Spec.HealthCheckNodePort != b.Spec.HealthCheckNodePort || a.Spec.ClusterIP != b.Spec.ClusterIP {
		t.Errorf("re-apply moved the lb Service: %+v", a.Spec)
	}
}

func TestLoadBalancerPool(t *testing.T) {
	svc := func(name, extra string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\nspec:\n  type: LoadBalancer\n  ports: [{port: 80}]\n" + extra + "---\n"
	}
	st, err := tryApply(lbLab, &labstore.State{}, svc("a", "  loadBalancerIP: 192.168.100.12\n")+svc("b", "")+svc("c", "  allocateLoadBalancerNodePorts: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "192.168.100.12", "b": "192.168.100.10", "c": "192.168.100.11"} {
		if got := LoadBalancerIngress(st.Service("default", name)); got.String() != want {
			t.Errorf("%s: %v, want %s", name, got, want)
		}
	}
	if np := st.Service("default", "c").Spec.Ports[0].NodePort; np != 0 {
		t.Errorf("c has node port %d with allocateLoadBalancerNodePorts false", np)
	}
	for _, tc := range []struct{ name, manifest, want string }{
		{"exhausted", svc("d", ""), `manifest t.yaml: document 1: Service default/d: status.loadBalancer.ingress: Invalid value: "": the lab's load balancer pool 192.168.100.10-192.168.100.12 is exhausted: all 3 addresses are allocated`},
		{"taken", svc("d", "  loadBalancerIP: 192.168.100.12\n"), `manifest t.yaml: document 1: Service default/d: spec.loadBalancerIP: Invalid value: "192.168.100.12": already allocated to Service default/a`},
		{"outside", svc("a", "  loadBalancerIP: 192.168.100.13\n"), `manifest t.yaml: document 1: Service default/a: spec.loadBalancerIP: Invalid value: "192.168.100.13": not in the lab's load balancer pool 192.168.100.10-192.168.100.12`},
		{"annotation", "apiVersion: v1\nkind: Service\nmetadata: {name: a, annotations: {metallb.io/loadBalancerIPs: '192.168.100.9'}}\nspec:\n  type: LoadBalancer\n  ports: [{port: 80}]\n",
			`manifest t.yaml: document 1: Service default/a: metadata.annotations[metallb.io/loadBalancerIPs]: Invalid value: "192.168.100.9": not in the lab's load balancer pool 192.168.100.10-192.168.100.12`},
	} {
		if _, err := tryApply(lbLab, st, tc.manifest); err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.want)
		}
	}
	// Without a pool the Service is accepted and stays pending, unless it asks for an address.
	st, err = tryApply(lab, &labstore.State{}, svc("a", ""))
	if err != nil || LoadBalancerIngress(st.Service("default", "a")).IsValid() {
		t.Errorf("no pool: %v, ingress %v", err, st.Service("default", "a").Status)
	}
	if _, err := tryApply(lab, &labstore.State{}, svc("a", "  loadBalancerIP: 192.168.100.12\n")); err == nil || !strings.Contains(err.Error(), "the lab has no load balancer pool (spec.loadBalancer.pool in the lab file)") {
		t.Errorf("no pool, loadBalancerIP: %v", err)
	}
}

func TestServiceTypeErrors(t *testing.T) {
	head := "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n"
	for _, tc := range []struct{ name, spec, want string }{
		{"type", "  type: Ingress\n  ports: [{port: 80}]\n", `spec.type: Unsupported value: "Ingress": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`},
		{"externalName missing", "  type: ExternalName\n", `spec.externalName: Required value`},
		{"externalName bad", "  type: ExternalName\n  externalName: foo_bar.com\n", `spec.externalName: Invalid value: "foo_bar.com": a lowercase RFC 1123 subdomain must consist of`},
		{"externalName clusterIP", "  type: ExternalName\n  externalName: a.b\n  clusterIP: 10.254.0.20\n", `spec.clusterIPs: Forbidden: may not be set for ExternalName services`},
		{"affinity", "  sessionAffinity: Sticky\n  ports: [{port: 80}]\n", `spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"`},
		{"timeout 0", "  sessionAffinity: ClientIP\n  sessionAffinityConfig: {clientIP: {timeoutSeconds: 0}}\n  ports: [{port: 80}]\n", `spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400`},
		{"timeout 86401", "  sessionAffinity: ClientIP\n  sessionAffinityConfig: {clientIP: {timeoutSeconds: 86401}}\n  ports: [{port: 80}]\n", `spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: must be greater than 0 and less than 86400`},
		{"config with None", "  sessionAffinityConfig: {clientIP: {timeoutSeconds: 10}}\n  ports: [{port: 80}]\n", `spec.sessionAffinityConfig: Forbidden: must not be set when session affinity is None`},
		{"externalIP loopback", "  externalIPs: [127.0.0.1]\n  ports: [{port: 80}]\n", `spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`},
		{"externalIP leading zero", "  externalIPs: [203.0.113.07]\n  ports: [{port: 80}]\n", `spec.externalIPs[0]: Invalid value: "203.0.113.07": must not have leading 0s`},
		{"source ranges on ClusterIP", "  loadBalancerSourceRanges: [10.0.0.0/8]\n  ports: [{port: 80}]\n", "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'"},
		{"source range bad", "  type: LoadBalancer\n  loadBalancerSourceRanges: [10.0.0.1/8]\n  ports: [{port: 80}]\n", `spec.LoadBalancerSourceRanges[0]: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length`},
		{"etp on ClusterIP", "  externalTrafficPolicy: Local\n  ports: [{port: 80}]\n", `spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services`},
		{"etp value", "  type: NodePort\n  externalTrafficPolicy: Global\n  ports: [{port: 80}]\n", `spec.externalTrafficPolicy: Unsupported value: "Global": supported values: "Cluster", "Local"`},
		{"itp value", "  internalTrafficPolicy: Node\n  ports: [{port: 80}]\n", `spec.internalTrafficPolicy: Unsupported value: "Node": supported values: "Cluster", "Local"`},
		{"hcnp with Cluster", "  type: LoadBalancer\n  healthCheckNodePort: 30100\n  ports: [{port: 80}]\n", "spec.healthCheckNodePort: Invalid value: 30100: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"},
		{"hcnp clash", "  type: LoadBalancer\n  externalTrafficPolicy: Local\n  healthCheckNodePort: 30100\n  ports: [{port: 80, nodePort: 30100}]\n", `spec.healthCheckNodePort 30100: port clash: already allocated to spec.ports[0].nodePort`},
		{"allocate on NodePort", "  type: NodePort\n  allocateLoadBalancerNodePorts: false\n  ports: [{port: 80}]\n", "spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'"},
	} {
		_, err := tryApply(lbLab, &labstore.State{}, head+tc.spec)
		want := "manifest t.yaml: document 1: Service default/s: " + tc.want
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, want)
		}
	}
	_, err := tryApply(lbLab, &labstore.State{}, "apiVersion: v1\nkind: Service\nmetadata: {name: s, annotations: {service.beta.kubernetes.io/load-balancer-source-ranges: '10.0.0.0/8, 1.2.3.4/33'}}\nspec:\n  type: LoadBalancer\n  ports: [{port: 80}]\n")
	if want := `manifest t.yaml: document 1: Service default/s: metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "1.2.3.4/33"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("annotation:\n got %v\nwant %s", err, want)
	}
}
