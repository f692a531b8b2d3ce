package workload

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
)

var lab = Cluster{
	Nodes: []Node{
		{Name: "hosta", PodCIDR: netip.MustParsePrefix("10.100.40.0/24")},
		{Name: "hostb", PodCIDR: netip.MustParsePrefix("10.100.81.0/24")},
	},
	ServiceSubnet:     netip.MustParsePrefix("10.254.0.0/16"),
	ReservedHostNames: []string{"hosta", "hostb", "client", "router"},
}

const httpserver = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: httpserver}
spec:
  replicas: 3
  selector: {matchLabels: {app: httpserver}}
  template:
    metadata: {labels: {app: httpserver}}
    spec:
      containers:
      - name: web
        image: svclab/netexec:dev
        ports: [{containerPort: 3000, name: http}, {containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: httpserver}
spec:
  type: NodePort
  selector: {app: httpserver}
  ports:
  - {name: http, port: 3000, targetPort: http, nodePort: 30000}
  - {name: alt, port: 8080}
`

func mustApply(t *testing.T, st *labstore.State, manifest string) *labstore.State {
	t.Helper()
	m, err := Decode([]byte(manifest), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	next, err := lab.Apply(st, m, "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func TestDeploymentSpreadsPodsAndServiceGetsEndpoints(t *testing.T) {
	st := mustApply(t, &labstore.State{}, httpserver)
	if len(st.Pods) != 3 {
		t.Fatalf("want 3 pods, got %d", len(st.Pods))
	}
	perNode := map[string]int{}
	for _, p := range st.Pods {
		perNode[p.Spec.NodeName]++
		if !strings.HasPrefix(p.Name, "httpserver-") || len(strings.Split(p.Name, "-")) != 3 {
			t.Errorf("pod name %q is not <deployment>-<hash>-<suffix>", p.Name)
		}
		ip := netip.MustParseAddr(p.Status.PodIP)
		if (p.Spec.NodeName == "hosta") != lab.Nodes[0].PodCIDR.Contains(ip) {
			t.Errorf("pod %s on %s has IP %s outside its node's pod CIDR", p.Name, p.Spec.NodeName, ip)
		}
	}
	if perNode["hosta"] != 2 || perNode["hostb"] != 1 {
		t.Errorf("pods not spread: %v", perNode)
	}
	svc := st.Service("default", "httpserver")
	if svc.Spec.ClusterIP != "10.254.0.11" {
		t.Errorf("cluster IP %s, want the lowest free from .11: 10.254.0.11", svc.Spec.ClusterIP)
	}
	if svc.Spec.Ports[0].NodePort != 30000 || svc.Spec.Ports[1].NodePort != 30001 {
		t.Errorf("node ports %d,%d want 30000 (given) and 30001 (allocated)", svc.Spec.Ports[0].NodePort, svc.Spec.Ports[1].NodePort)
	}
	if len(st.EndpointSlices) != 1 || len(st.EndpointSlices[0].Endpoints) != 3 {
		t.Fatalf("want one slice with 3 endpoints, got %+v", st.EndpointSlices)
	}
	for _, p := range st.EndpointSlices[0].Ports {
		if *p.Name == "http" && *p.Port != 3000 || *p.Name == "alt" && *p.Port != 8080 {
			t.Errorf("port %s resolved to %d", *p.Name, *p.Port)
		}
	}

	// Re-applying the same manifest keeps pods, IPs and allocations.
	again := mustApply(t, st, httpserver)
	for i := range st.Pods {
		if again.Pods[i].Name != st.Pods[i].Name || again.Pods[i].Status.PodIP != st.Pods[i].Status.PodIP {
			t.Errorf("pod %d changed on re-apply: %s -> %s", i, st.Pods[i].Name, again.Pods[i].Name)
		}
	}
	if again.EndpointSlices[0].Name != st.EndpointSlices[0].Name {
		t.Errorf("slice renamed on re-apply")
	}

	// Scale down to one replica.
	one := mustApply(t, again, strings.Replace(httpserver, "replicas: 3", "replicas: 1", 1))
	if len(one.Pods) != 1 || len(one.EndpointSlices[0].Endpoints) != 1 {
		t.Errorf("scale to 1: %d pods, %d endpoints", len(one.Pods), len(one.EndpointSlices[0].Endpoints))
	}
}

func TestDeletePodRecreatesDeploymentPod(t *testing.T) {
	st := mustApply(t, &labstore.State{}, httpserver)
	gone := st.Pods[0].Name
	next, err := lab.DeletePods(st, []string{gone}, DeleteOptions{GracePeriod: -1, Now: time.Unix(1000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	// The deleted pod terminates (30 s by default) while its replacement runs.
	if len(next.Pods) != 4 || len(Terminating(next)) != 1 || Terminating(next)[0].Name != gone {
		t.Fatalf("after deleting %s: %d pods, terminating %v", gone, len(next.Pods), Terminating(next))
	}
	if d := next.Pod(gone).DeletionTimestamp; d == nil || !d.Time.Equal(time.Unix(1030, 0)) {
		t.Errorf("deletionTimestamp %v, want now + 30 s", d)
	}
	reaped := Reap(next, []string{gone})
	if len(reaped.Pods) != 3 || reaped.Pod(gone) != nil {
		t.Errorf("after the reap: %d pods, deleted one present: %v", len(reaped.Pods), reaped.Pod(gone) != nil)
	}
	// The replacement starts while the deleted pod still runs: it may not
	// take its address (the kernel would refuse the second one).
	for _, p := range next.Pods {
		if p.Name != gone && p.Status.PodIP == st.Pods[0].Status.PodIP {
			t.Errorf("the replacement %s took the address %s of the deleted pod %s", p.Name, p.Status.PodIP, gone)
		}
	}
}

func TestServiceWithoutMatchingPodsHasEmptySlice(t *testing.T) {
	st := mustApply(t, &labstore.State{}, `
apiVersion: v1
kind: Service
metadata: {name: lonely}
spec:
  selector: {app: nothing}
  ports: [{port: 80}]
`)
	if len(st.EndpointSlices) != 1 || len(st.EndpointSlices[0].Endpoints) != 0 {
		t.Errorf("want one empty slice, got %+v", st.EndpointSlices)
	}
}

func TestBadManifests(t *testing.T) {
	base := mustApply(t, &labstore.State{}, httpserver)
	cases := []struct{ name, manifest, want string }{
		{"unknown field", `
apiVersion: v1
kind: Service
metadata: {name: x}
spec: {portz: []}`, `unknown field "spec.portz"`},
		{"unsupported kind", `
apiVersion: v1
kind: Secret
metadata: {name: x}`, `kind "Secret": unsupported`},
		{"node port out of range", `
apiVersion: v1
kind: Service
metadata: {name: x}
spec: {type: NodePort, ports: [{port: 80, nodePort: 40000}]}`, `spec.ports[0].nodePort 40000: outside the node port range 30000-32767`},
		{"node port taken", `
apiVersion: v1
kind: Service
metadata: {name: x}
spec: {type: NodePort, ports: [{port: 80, nodePort: 30000}]}`, `spec.ports[0].nodePort 30000: port clash: already allocated to Service default/httpserver`},
		{"cluster IP outside subnet", `
apiVersion: v1
kind: Service
metadata: {name: x}
spec: {clusterIP: 10.0.0.1, ports: [{port: 80}]}`, `spec.clusterIP 10.0.0.1: outside the lab's serviceSubnet 10.254.0.0/16`},
		{"pod pinned to a missing node", `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {nodeName: hostc, containers: [{name: c, image: x}]}`, `spec.nodeName "hostc": no such node (have hosta, hostb)`},
		{"pod named like a node", `
apiVersion: v1
kind: Pod
metadata: {name: client}
spec: {containers: [{name: c, image: x}]}`, `metadata.name "client": taken by a node or client`},
		{"container port clash", `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: x, ports: [{containerPort: 80}, {containerPort: 80}]}]}`, `containerPort 80: port clash`},
		{"multi-port service without names", `
apiVersion: v1
kind: Service
metadata: {name: x}
spec: {ports: [{port: 80}, {port: 81}]}`, `spec.ports[0].name: required`},
		// Found by FuzzApply: both reached the iptables comments and made
		// every later iptables-restore fail.
		{"port name with a space", `
apiVersion: v1
kind: Service
metadata: {name: x}
spec: {ports: [{name: web port, port: 80}]}`, `spec.ports[0].name: Invalid value: "web port": a lowercase RFC 1123 label`},
		{"namespace with a quote", `
apiVersion: v1
kind: Service
metadata: {name: x, namespace: 'a"b'}
spec: {ports: [{port: 80}]}`, `metadata.namespace: Invalid value: "a\"b": a lowercase RFC 1123 label`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.manifest), "bad.yaml")
			if err == nil {
				_, err = lab.Apply(base, m, "bad.yaml")
			}
			if err == nil || !strings.Contains(err.Error(), "manifest bad.yaml") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to name bad.yaml and say %q", err, tc.want)
			}
		})
	}
	if len(base.Services) != 1 || len(base.Pods) != 3 {
		t.Errorf("a failed apply changed the input state")
	}
}

func TestCalicoIPAddrsAnnotationPinsThePodIP(t *testing.T) {
	pod := func(ip string) string {
		return `
apiVersion: v1
kind: Pod
metadata:
  name: httpserver
  annotations: {cni.projectcalico.org/ipAddrs: '["` + ip + `"]'}
spec: {nodeName: hostb, containers: [{name: c, image: x}]}`
	}
	st := mustApply(t, &labstore.State{}, pod("10.100.81.180"))
	if got := st.Pod("httpserver").Status.PodIP; got != "10.100.81.180" {
		t.Errorf("pod IP %s, want the annotated 10.100.81.180", got)
	}
	for _, bad := range []string{"10.100.40.7", "10.100.81.1", "banana"} {
		m, err := Decode([]byte(pod(bad)), "pin.yaml")
		if err == nil {
			_, err = lab.Apply(&labstore.State{}, m, "pin.yaml")
		}
		if err == nil || !strings.Contains(err.Error(), "cni.projectcalico.org/ipAddrs") {
			t.Errorf("annotation %q: error %v, want one naming the annotation", bad, err)
		}
	}
}

func TestWeightAnnotationReachesTheEndpointSlice(t *testing.T) {
	pod := func(name, weight string) string {
		return `
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `, labels: {app: w}, annotations: {svclab.dev/weight: "` + weight + `"}}
spec: {nodeName: hosta, containers: [{name: c, image: x, ports: [{containerPort: 80}]}]}
---`
	}
	st := mustApply(t, &labstore.State{}, pod("heavy", "3")+pod("light", "1")+`
apiVersion: v1
kind: Service
metadata: {name: w}
spec: {selector: {app: w}, ports: [{port: 80}]}`)
	got := st.EndpointSlices[0].Annotations["svclab.dev/endpoint-weights"]
	want := `{"` + st.Pod("heavy").Status.PodIP + `":3,"` + st.Pod("light").Status.PodIP + `":1}`
	if got != want {
		t.Errorf("slice weights %s, want %s", got, want)
	}
	m, _ := Decode([]byte(pod("bad", "0")), "w.yaml")
	if _, err := lab.Apply(st, m, "w.yaml"); err == nil || !strings.Contains(err.Error(), "svclab.dev/weight") {
		t.Errorf("weight 0: %v", err)
	}
}

// TestHostileManifests are inputs the API server refuses and svclab used
// to accept: each is refused with one error naming the file, the document,
// the object and the field, and leaves the state as it was.
func TestHostileManifests(t *testing.T) {
	base := mustApply(t, &labstore.State{}, httpserver)
	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []struct{ name, manifest, want string }{
		{"namespace escaping the store", `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: "../../../../tmp/x"}
spec: {containers: [{name: c, image: x}]}`,
			`manifest bad.yaml: document 1: Pod ../../../../tmp/x/p: metadata.namespace: Invalid value: "../../../../tmp/x": a lowercase RFC 1123 label must consist of`},
		{"service port name with a space", svcDoc + `---
apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec: {ports: [{name: http, port: 80}, {name: web port, port: 81}]}`,
			`manifest bad.yaml: document 3: Service demo/web: spec.ports[1].name: Invalid value: "web port": a lowercase RFC 1123 label must consist of`},
		{"two ports on one port and protocol", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{name: a, port: 80}, {name: b, port: 80, targetPort: 81}]}`,
			`manifest bad.yaml: document 1: Service default/web: spec.ports[1]: Duplicate value: port 80/TCP (already spec.ports[0]): the rule for it could never match`},
		{"same port on two protocols is fine, a bad target port is not", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{name: a, port: 53, protocol: UDP}, {name: b, port: 53, targetPort: "dns server"}]}`,
			`spec.ports[1].targetPort: Invalid value: "dns server": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`},
		{"two ports on one node port", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {type: NodePort, ports: [{name: a, port: 80, nodePort: 31000}, {name: b, port: 81, nodePort: 31000}]}`,
			`spec.ports[1].nodePort 31000: port clash: already allocated to Service default/web`},
		{"cluster IPs disagree", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {clusterIP: 10.254.0.50, clusterIPs: [10.254.0.51], ports: [{port: 80}]}`,
			"spec.clusterIPs: Invalid value: [\"10.254.0.51\"]: first value must match `clusterIP`"},
		{"invalid label", `
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {"app": "a b"}}
spec: {containers: [{name: c, image: x}]}`,
			`Pod default/p: metadata.labels: Invalid value: "a b"`},
		{"invalid selector", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {"-app": x}, ports: [{port: 80}]}`,
			`Service default/web: spec.selector: Invalid value: "-app"`},
		{"upper-case pod name", `
apiVersion: v1
kind: Pod
metadata: {name: Web}
spec: {containers: [{name: c, image: x}]}`,
			`Pod default/Web: metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain`},
		{"241-character pod name", `
apiVersion: v1
kind: Pod
metadata: {name: ` + long(241) + `}
spec: {containers: [{name: c, image: x}]}`,
			`metadata.name: Too long: may not be more than 63 bytes (241 characters; a pod is a host of the lab: the API server allows 253, a lab host name at most 63)`},
		{"container port name", `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: x, ports: [{name: "web port", containerPort: 80}]}]}`,
			`Pod default/p: spec.containers[0].ports[0].name: Invalid value: "web port": must contain only alpha-numeric characters`},
		{"container port protocol", `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: x, ports: [{containerPort: 80, protocol: ICMP}]}]}`,
			`spec.containers[0].ports[0].protocol: Unsupported value: "ICMP"`},
		{"config map key", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {"../x": "v"}`,
			`ConfigMap default/c: data[../x]: Invalid value: "../x": a valid config key must consist of`},
		{"config map too big", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {big: ` + long(corev1.MaxSecretSize+1) + `}`,
			`ConfigMap default/c: data: Too long: may not be more than 1048576 bytes`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.manifest), "bad.yaml")
			if err == nil {
				_, err = lab.Apply(base, m, "bad.yaml")
			}
			if err == nil || !strings.HasPrefix(err.Error(), "manifest bad.yaml: document ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant it to name bad.yaml and a document and say %q", err, tc.want)
			}
		})
	}
	if len(base.Services) != 1 || len(base.Pods) != 3 {
		t.Errorf("a failed apply changed the input state")
	}
}

// TestLongDeploymentName: a 231-character Deployment name used to give pods
// whose names no file or namespace could hold. Its pods are named as the
// API server names generated objects: at most 58 characters of the base and
// 5 random ones.
func TestLongDeploymentName(t *testing.T) {
	name := strings.Repeat("d", 231)
	st := mustApply(t, &labstore.State{}, strings.Replace(httpserver, "metadata: {name: httpserver}", "metadata: {name: "+name+"}", 1))
	if len(st.Pods) != 3 {
		t.Fatalf("%d pods", len(st.Pods))
	}
	for _, p := range st.Pods {
		if len(p.Name) != MaxPodNameLen || !strings.HasPrefix(p.Name, name[:58]) || !ownedBy(p, "Deployment", "default", name) {
			t.Errorf("pod %q (%d characters), want 63 characters from the Deployment's name", p.Name, len(p.Name))
		}
		if p.OwnerReferences[0].UID == "" || p.OwnerReferences[0].UID != st.Deployments[0].UID {
			t.Errorf("owner reference %+v, Deployment UID %q", p.OwnerReferences[0], st.Deployments[0].UID)
		}
	}
}
