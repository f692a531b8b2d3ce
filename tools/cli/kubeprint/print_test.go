package kubeprint

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/svclab/svclab/internal/golden"
)

// now is the clock every AGE counts from.
var now = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

// pods are one of each state a lab reports: running, restarted and
// running, crash-looping, being created, and a node proxy.
func pods() []runtime.Object {
	running := func(ns, name, ip string, created time.Duration) *corev1.Pod {
		return &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: ago(created), Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "web", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, HostIP: "192.168.16.73",
				StartTime:  ptr.To(ago(created)),
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Image: "nginx", Ready: true, Started: ptr.To(true),
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(created)}}}}},
		}
	}
	restarted := running("default", "web-b", "10.244.1.3", 3*time.Hour)
	restarted.Status.ContainerStatuses[0].RestartCount = 2
	restarted.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error", FinishedAt: ago(5 * time.Minute)}
	crashing := running("default", "web-c", "10.244.1.4", 10*time.Minute)
	crashing.Labels = map[string]string{"app": "db"}
	crashing.Status.Conditions[0].Status = corev1.ConditionFalse
	crashing.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "web", Image: "nginx", RestartCount: 4,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: ago(40 * time.Second)}}}
	creating := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-d"},
		Spec:       corev1.PodSpec{NodeName: "node2", Containers: []corev1.Container{{Name: "web"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "web",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}},
	}
	proxy := running("kube-system", "kube-proxy-node1", "192.168.16.73", 26*time.Hour)
	proxy.Labels = map[string]string{"k8s-app": "kube-proxy"}
	return []runtime.Object{running("default", "web-a", "10.244.1.2", 90*time.Second), restarted, crashing, creating, proxy}
}

func services() []runtime.Object {
	svc := func(name string, typ corev1.ServiceType, ip string) *corev1.Service {
		return &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: ago(49 * time.Hour)},
			// ipFamilies and ipFamilyPolicy as the API server (and a
			// lab) defaults them on an IPv4 cluster.
			Spec: corev1.ServiceSpec{Type: typ, ClusterIP: ip, ClusterIPs: []string{ip}, Selector: map[string]string{"app": "web"},
				IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
				SessionAffinity: corev1.ServiceAffinityNone,
				Ports:           []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}}},
		}
	}
	np := svc("web-np", corev1.ServiceTypeNodePort, "10.96.0.12")
	np.Spec.Ports = []corev1.ServicePort{
		{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")},
		{Name: "dns", Port: 53, NodePort: 30053, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
	}
	np.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	lb := svc("web-lb", corev1.ServiceTypeLoadBalancer, "10.96.0.13")
	lb.Spec.Ports[0].NodePort = 31000
	lb.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.168.55.10"}, {Hostname: "lb.example.test"}}
	pending := svc("web-lb-pending", corev1.ServiceTypeLoadBalancer, "10.96.0.14")
	ext := svc("web-ext", corev1.ServiceTypeExternalName, "")
	ext.Spec.ClusterIPs, ext.Spec.ExternalName, ext.Spec.Ports = nil, "web.example.test", nil
	ext.Spec.IPFamilies, ext.Spec.IPFamilyPolicy = nil, nil // an ExternalName Service has none
	return []runtime.Object{svc("web", corev1.ServiceTypeClusterIP, "10.96.0.11"), np, lb, pending, ext}
}

func endpointSlices() []runtime.Object {
	es := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: "web-np-x7k2p", Labels: map[string]string{discoveryv1.LabelServiceName: "web-np"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}, {Name: ptr.To("dns"), Port: ptr.To[int32](53)}},
	}
	for i, ip := range []string{"10.244.1.2", "10.244.1.3", "10.244.1.4", "10.244.2.2", "10.244.2.3"} {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(i != 2)}})
	}
	empty := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: "web-zq9ls", CreationTimestamp: ago(2 * time.Minute)},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	return []runtime.Object{es, empty}
}

func others() (configMaps, namespaces, nodes []runtime.Object) {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-proxy", CreationTimestamp: ago(26 * time.Hour)},
		Data:       map[string]string{"config.conf": "mode: iptables\n"}}
	ns := func(name string) runtime.Object {
		return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(26 * time.Hour)}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	}
	node := func(name, ip string, ready corev1.ConditionStatus) runtime.Object {
		return &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(26 * time.Hour), Labels: map[string]string{"node-role.kubernetes.io/lab": ""}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}},
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}},
				NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OSImage: "Debian GNU/Linux 12 (bookworm)", KernelVersion: "6.1.0-28-amd64", Architecture: "amd64"}}}
	}
	return []runtime.Object{cm}, []runtime.Object{ns("default"), ns("kube-system")},
		[]runtime.Object{node("hosta", "192.168.16.73", corev1.ConditionTrue), node("hostb", "192.168.16.139", corev1.ConditionFalse)}
}

func render(t *testing.T, objs []runtime.Object, opts Options) []byte {
	t.Helper()
	opts.Now = now
	var buf bytes.Buffer
	if err := Print(&buf, objs, opts); err != nil {
		t.Fatalf("Print: %v", err)
	}
	return buf.Bytes()
}

// TestPrintTables compares kubectl get's tables, whole, with goldens: the
// columns, wide columns, NAMESPACE first with -A, and the cells as the
// API server's printers make them.
func TestPrintTables(t *testing.T) {
	cms, nss, nodes := others()
	defaultPods := pods()[:4]
	for _, tc := range []struct {
		name string
		objs []runtime.Object
		opts Options
	}{
		{"pods", defaultPods, Options{}},
		{"pods-wide", defaultPods, Options{Output: OutputWide}},
		{"pods-all-namespaces", pods(), Options{WithNamespace: true}},
		{"pods-no-headers-labels", defaultPods, Options{NoHeaders: true, ShowLabels: true}},
		{"services", services(), Options{}},
		{"services-wide", services(), Options{Output: OutputWide}},
		{"services-with-kind", services()[:2], Options{WithKind: true}},
		{"endpointslices", endpointSlices(), Options{}},
		{"configmaps-all-namespaces", cms, Options{WithNamespace: true}},
		{"namespaces", nss, Options{}},
		{"nodes", nodes, Options{}},
		{"nodes-wide", nodes, Options{Output: OutputWide}},
	} {
		t.Run(tc.name, func(t *testing.T) { golden.Check(t, tc.name+".golden", render(t, tc.objs, tc.opts)) })
	}
}

// TestPrintObjects: -o json and yaml print the object itself for one
// named object, a v1 List otherwise (empty too), keys sorted as kubectl's
// unstructured printing sorts them; -o name prints kind/name.
func TestPrintObjects(t *testing.T) {
	svcs := services()
	for _, tc := range []struct {
		name string
		objs []runtime.Object
		opts Options
	}{
		{"service.json", svcs[1:2], Options{Output: OutputJSON, Single: true}},
		{"services-list.json", svcs[:2], Options{Output: OutputJSON}},
		{"services-list-of-one.yaml", svcs[:1], Options{Output: OutputYAML}},
		{"empty-list.json", nil, Options{Output: OutputJSON}},
		{"pod.yaml", pods()[1:2], Options{Output: OutputYAML, Single: true}},
		{"names", append(append(pods()[:2], svcs[0]), endpointSlices()[0]), Options{Output: OutputName}},
	} {
		t.Run(tc.name, func(t *testing.T) { golden.Check(t, tc.name+".golden", render(t, tc.objs, tc.opts)) })
	}
}

func TestPrintRefusesUnknownOutputAndKind(t *testing.T) {
	if err := Print(&bytes.Buffer{}, services(), Options{Output: "jsonpath"}); err == nil {
		t.Error("-o jsonpath: no error")
	}
	if err := Print(&bytes.Buffer{}, []runtime.Object{&corev1.Secret{}}, Options{}); err == nil {
		t.Error("a Secret's table: no error, but kubeprint has no printer for it")
	}
	noKind := services()[0].(*corev1.Service).DeepCopy()
	noKind.TypeMeta = metav1.TypeMeta{}
	if err := Print(&bytes.Buffer{}, []runtime.Object{noKind}, Options{Output: OutputJSON}); err == nil {
		t.Error("-o json of an object without apiVersion and kind: no error")
	}
}

// TestDescribe compares kubectl describe's layout, whole, with goldens.
func TestDescribe(t *testing.T) {
	svcs, slices := services(), endpointSlices()
	np := svcs[1].(*corev1.Service)
	np.Labels = map[string]string{"app": "web", "tier": "front"}
	np.Annotations = map[string]string{"note": "seed 004", corev1.LastAppliedConfigAnnotation: "{}"}
	golden.Check(t, "describe-service-nodeport.golden", []byte(DescribeService(np, []discoveryv1.EndpointSlice{*slices[0].(*discoveryv1.EndpointSlice)})))
	golden.Check(t, "describe-service-loadbalancer.golden", []byte(DescribeService(svcs[2].(*corev1.Service), nil)))
	p := pods()
	golden.Check(t, "describe-pod-restarted.golden", []byte(DescribePod(p[1].(*corev1.Pod))))
	golden.Check(t, "describe-pod-crashloop.golden", []byte(DescribePod(p[2].(*corev1.Pod))))
}
