package netns

import (
	"net/netip"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/svclab/svclab/labs/agents/clusterdns"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/netns/workload"
)

// Every lab has cluster DNS, as a kubeadm cluster has: the Service
// kube-system/kube-dns on the tenth address of the service subnet (kubeadm's
// DNS IP; 10.96.0.10 for 10.96.0.0/16) with upstream's ports (dns 53/UDP,
// dns-tcp 53/TCP, metrics 9153/TCP, so its chains carry upstream's names),
// and the Deployment kube-system/coredns (one replica, on the first node)
// whose pod runs svclab's DNS server, `svclab dns` (package clusterdns).

// coreDNSImage is the coredns Deployment's image, as kubeadm's; a lab pod
// whose image is a coredns image runs svclab's DNS server (isCoreDNS).
const coreDNSImage = "registry.k8s.io/coredns/coredns:v1.12.0"

// ClusterDNSIP is the kube-dns Service's ClusterIP in a lab: the tenth
// address of the service subnet.
func ClusterDNSIP(serviceSubnet netip.Prefix) netip.Addr {
	ip := serviceSubnet.Masked().Addr()
	for i := 0; i < 10; i++ {
		ip = ip.Next()
	}
	return ip
}

// clusterDNSManifests are the objects of a new lab's cluster DNS.
func clusterDNSManifests(t *topology.Lab) *workload.Manifests {
	labels := map[string]string{"k8s-app": "kube-dns"}
	one := int32(1)
	ip := ClusterDNSIP(t.Spec.ServiceSubnet).String()
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: clusterdns.DNSServiceNamespace, Name: clusterdns.DNSServiceName,
			Labels:      map[string]string{"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"},
			Annotations: map[string]string{"prometheus.io/port": "9153", "prometheus.io/scrape": "true"},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: ip, ClusterIPs: []string{ip},
			Selector: labels,
			Ports: []corev1.ServicePort{
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: intstr.FromInt32(53)},
				{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9153, TargetPort: intstr.FromInt32(9153)},
			},
		},
	}
	deploy := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeName:  t.Spec.Nodes[0].Name,
					DNSPolicy: corev1.DNSDefault,
					Containers: []corev1.Container{{
						Name: "coredns", Image: coreDNSImage,
						Ports: []corev1.ContainerPort{
							{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
							{Name: "dns-tcp", ContainerPort: 53, Protocol: corev1.ProtocolTCP},
							{Name: "metrics", ContainerPort: 9153, Protocol: corev1.ProtocolTCP},
						},
					}},
				},
			},
		},
	}
	return &workload.Manifests{Services: []*corev1.Service{svc}, Deployments: []*appsv1.Deployment{deploy}}
}

// isCoreDNS reports whether a pod runs a coredns image (its repository's
// last path element is "coredns"): the lab's kubelet runs svclab's DNS
// server for it instead of the netexec server.
func isCoreDNS(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.Containers {
		repo, _, _ := strings.Cut(c.Image, "@")
		if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
			repo = repo[:i]
		}
		if repo[strings.LastIndexByte(repo, '/')+1:] == "coredns" {
			return true
		}
	}
	return false
}

// podArgv is the process a pod runs: svclab's DNS server for a coredns
// pod, else the netexec server on the pod's TCP and UDP containerPorts.
func (l *Lab) podArgv(pod *corev1.Pod, tcp, udp []int, opts Options) []string {
	if isCoreDNS(pod) {
		return selfexec.Argv(opts.Binary, &selfexec.DNS{Options: clusterdns.Options{LabDir: l.Store.Dir}})
	}
	return selfexec.Argv(opts.Binary, &selfexec.Netexec{Options: netexecOptions(pod, tcp, udp)})
}
