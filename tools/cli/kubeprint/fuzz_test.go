package kubeprint

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// FuzzPrint decodes a Pod, a Service and an EndpointSlice from the same
// bytes (what decodes) and prints each in every format: no panic, no
// error, a table of one header and one row with every column, and
// JSON that decodes back to the object's kind.
func FuzzPrint(f *testing.F) {
	f.Add([]byte("metadata: {name: web-a, namespace: default, labels: {app: web}}\nspec: {nodeName: node1, containers: [{name: web}], type: NodePort, ports: [{port: 80, nodePort: 30080, protocol: TCP}]}\nstatus: {phase: Running, podIPs: [{ip: 10.244.1.2}], containerStatuses: [{name: web, ready: true, restartCount: 3, state: {running: {}}, lastState: {terminated: {exitCode: 1}}}]}\n"))
	f.Add([]byte("metadata: {name: lb}\nspec: {type: LoadBalancer, clusterIPs: [10.96.0.1], externalIPs: [1.2.3.4]}\nstatus: {loadBalancer: {ingress: [{ip: 5.6.7.8}, {hostname: a.example}]}}\n"))
	// Dual-stack: a Service with both families, a pod with both
	// addresses, an IPv6 slice.
	f.Add([]byte("metadata: {name: d}\nspec: {type: NodePort, ipFamilyPolicy: PreferDualStack, ipFamilies: [IPv4, IPv6], clusterIP: 10.96.0.11, clusterIPs: [10.96.0.11, 'fd00:10:96::b'], ports: [{port: 80, nodePort: 30080}]}\nstatus: {podIP: 10.244.1.2, podIPs: [{ip: 10.244.1.2}, {ip: 'fd00:10:244:1::2'}]}\n"))
	f.Add([]byte("metadata: {name: s6}\naddressType: IPv6\nports: [{name: http, port: 80}]\nendpoints: [{addresses: ['fd00:10:244:1::2']}]\n"))
	f.Add([]byte("metadata: {name: s}\naddressType: IPv4\nports: [{name: http, port: 80}, {}]\nendpoints: [{addresses: [10.0.0.1, 10.0.0.2]}, {addresses: []}]\n"))
	f.Add([]byte("metadata: {name: \"a\\tb\\nc\\x1b[31m\"}\nstatus: {containerStatuses: [{state: {terminated: {signal: 9}}}, {state: {waiting: {reason: X}}}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var objs []runtime.Object
		var pod corev1.Pod
		if yaml.Unmarshal(data, &pod) == nil {
			pod.APIVersion, pod.Kind = "v1", "Pod"
			objs = append(objs, &pod)
		}
		var svc corev1.Service
		if yaml.Unmarshal(data, &svc) == nil {
			svc.APIVersion, svc.Kind = "v1", "Service"
			objs = append(objs, &svc)
		}
		var es discoveryv1.EndpointSlice
		if yaml.Unmarshal(data, &es) == nil {
			es.APIVersion, es.Kind = "discovery.k8s.io/v1", "EndpointSlice"
			objs = append(objs, &es)
		}
		for _, o := range objs {
			for _, out := range []string{OutputTable, OutputWide, OutputJSON, OutputYAML, OutputName} {
				var buf bytes.Buffer
				if err := Print(&buf, []runtime.Object{o}, Options{Output: out, Single: true, Now: now}); err != nil {
					t.Fatalf("%T -o %q: %v", o, out, err)
				}
				if out == OutputWide {
					kp, _ := printerFor(o)
					if rows := kp.row(o, true, now); len(rows) != len(kp.columns) {
						t.Fatalf("%T: %d cells for %d columns", o, len(rows), len(kp.columns))
					}
					if lines := strings.Count(buf.String(), "\n"); lines != 2 {
						t.Fatalf("%T -o wide: %d lines, want a header and one row:\n%s", o, lines, buf.String())
					}
				}
			}
			if p, ok := o.(*corev1.Pod); ok {
				DescribePod(p)
			}
			if s, ok := o.(*corev1.Service); ok {
				DescribeService(s, []discoveryv1.EndpointSlice{es})
			}
		}
	})
}
