package workload

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/svclab/svclab/internal/labstore"
)

// The NodePort range of a default API server (--service-node-port-range).
const (
	NodePortMin = 30000
	NodePortMax = 32767
)

// applyService validates a Service like the API server and fills in what the
// API server allocates: its IP families and a cluster IP of each from the
// lab's Service range of that family (services_families*.go), node ports
// (and a healthCheckNodePort) from 30000-32767, the defaults; and what the
// lab's load balancer gives a LoadBalancer Service (services_lb.go). A Service that exists
// keeps what was allocated to it unless the manifest asks otherwise.
func (c Cluster) applyService(st *labstore.State, svc *corev1.Service, source string) error {
	defaultNamespace(&svc.ObjectMeta)
	a := &serviceAdmission{Cluster: c, svc: svc, source: source, where: fmt.Sprintf("Service %s/%s", svc.Namespace, svc.Name)}
	a.old = st.Service(svc.Namespace, svc.Name)
	for _, s := range st.Services {
		if s != a.old {
			a.others = append(a.others, s)
		}
	}
	for _, step := range []func() error{
		a.checkMetadata,
		a.checkType,
		a.admitIPFamilies,
		a.allocateClusterIPs,
		a.checkUpgradeDowngrade,
		a.admitPorts,
		a.allocateHealthCheckNodePort,
		a.allocateLoadBalancer,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	st.Services = append(a.others, svc)
	return nil
}

// serviceAdmission is one Service on its way into the lab: the steps of
// applyService check it and fill it in, in order.
type serviceAdmission struct {
	Cluster
	svc    *corev1.Service
	old    *corev1.Service   // the stored Service of that name, or nil
	others []*corev1.Service // the stored Services but old
	source string            // the manifest, for errors
	where  string            // "Service ns/name", for errors
}

// checkMetadata checks the name, namespace and labels, and the selector
// (label syntax).
func (a *serviceAdmission) checkMetadata() error {
	if err := checkMeta(a.source, "Service", a.svc.ObjectMeta); err != nil {
		return err
	}
	return fieldErrors(a.source, "Service", a.svc.ObjectMeta, metav1validation.ValidateLabels(a.svc.Spec.Selector, field.NewPath("spec", "selector")))
}

// checkType fills in the API server's defaults, then checks the fields of
// the Service's type, headlessness, and that it has ports when it needs
// them.
func (a *serviceAdmission) checkType() error {
	svc := a.svc
	defaultService(svc)
	if err := fieldErrors(a.source, "Service", svc.ObjectMeta, validateServiceTypes(svc)); err != nil {
		return err
	}
	if err := checkHeadless(svc, a.source, a.where); err != nil {
		return err
	}
	if len(svc.Spec.Ports) == 0 && svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		return errorf(a.source, "%s: spec.ports: at least one port is required", a.where)
	}
	return nil
}

// admitIPFamilies brings the cluster IP fields to what the API server
// stores: on update, the old Service read as the API server reads it and
// its allocated cluster IPs kept unless the manifest names others; then
// clusterIP and clusterIPs in step, and ipFamilyPolicy and ipFamilies
// defaulted and checked (services_families_init.go).
func (a *serviceAdmission) admitIPFamilies() error {
	if a.old != nil {
		a.old = a.old.DeepCopy()
		a.defaultOnReadIPFamilies(a.old)
		patchAllocatedValues(a.svc, a.old)
	}
	normalizeClusterIPs(a.svc, a.old)
	return fieldErrors(a.source, "Service", a.svc.ObjectMeta, a.initIPFamilyFields(a.svc, a.old))
}

// allocateClusterIPs: see assignClusterIPs; an ExternalName Service has
// no cluster IP.
func (a *serviceAdmission) allocateClusterIPs() error {
	if a.svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	return a.assignClusterIPs(a.svc, a.others, a.source, a.where)
}

// checkUpgradeDowngrade is the API server's update validation of cluster
// IPs and families (after allocation, as the API server validates).
func (a *serviceAdmission) checkUpgradeDowngrade() error {
	if a.old == nil {
		return nil
	}
	return fieldErrors(a.source, "Service", a.svc.ObjectMeta, upgradeDowngradeErrors(a.svc, a.old))
}

// admitPorts checks and defaults each port, and gives it its node port,
// one port after the other.
func (a *serviceAdmission) admitPorts() error {
	names := map[string]bool{}
	portOf := map[string]string{} // protocol/port -> field that declared it
	for i := range a.svc.Spec.Ports {
		if err := a.checkPort(i, names, portOf); err != nil {
			return err
		}
		if err := a.assignNodePort(a.svc, i, a.old, a.others, a.source, a.where); err != nil {
			return err
		}
	}
	return nil
}

// checkPort checks port i as the API server does (its name, protocol,
// number, that no other port has the same protocol and number, its
// targetPort) and fills in its defaults (TCP, targetPort = port). names
// and portOf are the ports before it.
func (a *serviceAdmission) checkPort(i int, names map[string]bool, portOf map[string]string) error {
	source, where := a.source, a.where
	p := &a.svc.Spec.Ports[i]
	field := fmt.Sprintf("spec.ports[%d]", i)
	if len(a.svc.Spec.Ports) > 1 && p.Name == "" {
		return errorf(source, "%s: %s.name: required when a Service has more than one port", where, field)
	}
	if p.Name != "" {
		// The API server's rule for Service port names: a DNS-1123
		// label (so "web port" is refused: it would break every
		// iptables-restore of the lab's proxies).
		if msgs := validation.IsDNS1123Label(p.Name); len(msgs) > 0 {
			return errorf(source, "%s: %s.name: Invalid value: %q: %s", where, field, p.Name, msgs[0])
		}
	}
	if names[p.Name] {
		return errorf(source, "%s: %s.name %q: duplicate port name", where, field, p.Name)
	}
	names[p.Name] = true
	if p.Protocol == "" {
		p.Protocol = corev1.ProtocolTCP
	}
	if p.Protocol != corev1.ProtocolTCP && p.Protocol != corev1.ProtocolUDP && p.Protocol != corev1.ProtocolSCTP {
		return errorf(source, "%s: %s.protocol %q: want TCP, UDP or SCTP", where, field, p.Protocol)
	}
	if p.Port < 1 || p.Port > 65535 {
		return errorf(source, "%s: %s.port %d: must be 1-65535", where, field, p.Port)
	}
	key := fmt.Sprintf("%s/%d", p.Protocol, p.Port)
	if prev, dup := portOf[key]; dup {
		return errorf(source, "%s: %s: Duplicate value: port %d/%s (already %s): the rule for it could never match", where, field, p.Port, p.Protocol, prev)
	}
	portOf[key] = field
	if p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal == 0 && p.TargetPort.StrVal == "" {
		p.TargetPort = intstr.FromInt32(p.Port)
	}
	if err := checkTargetPort(p.TargetPort); err != "" {
		return errorf(source, "%s: %s.targetPort: Invalid value: %s: %s", where, field, quoteTarget(p.TargetPort), err)
	}
	return nil
}

// allocateHealthCheckNodePort: see assignHealthCheckNodePort.
func (a *serviceAdmission) allocateHealthCheckNodePort() error {
	return a.assignHealthCheckNodePort(a.svc, a.old, a.others, a.source, a.where)
}

// allocateLoadBalancer: see assignLoadBalancer.
func (a *serviceAdmission) allocateLoadBalancer() error {
	if ferr := a.assignLoadBalancer(a.svc, a.old, a.others); ferr != nil {
		return fieldErrors(a.source, "Service", a.svc.ObjectMeta, field.ErrorList{ferr})
	}
	return nil
}

// checkTargetPort is the API server's ValidatePortNumOrName: a number from
// 1 to 65535 or an IANA_SVC_NAME naming a container port.
func checkTargetPort(tp intstr.IntOrString) string {
	var msgs []string
	if tp.Type == intstr.String {
		msgs = validation.IsValidPortName(tp.StrVal)
	} else {
		msgs = validation.IsValidPortNum(int(tp.IntVal))
	}
	if len(msgs) > 0 {
		return msgs[0]
	}
	return ""
}

func quoteTarget(tp intstr.IntOrString) string {
	if tp.Type == intstr.String {
		return fmt.Sprintf("%q", tp.StrVal)
	}
	return fmt.Sprint(tp.IntVal)
}

func (c Cluster) assignNodePort(svc *corev1.Service, i int, old *corev1.Service, others []*corev1.Service, source, where string) error {
	p := &svc.Spec.Ports[i]
	field := fmt.Sprintf("spec.ports[%d].nodePort", i)
	hasNodePorts := svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if !hasNodePorts {
		if p.NodePort != 0 {
			return errorf(source, "%s: %s %d: only a NodePort or LoadBalancer Service has node ports", where, field, p.NodePort)
		}
		return nil
	}
	taken := map[string]string{}
	for _, s := range others {
		for _, op := range append(s.Spec.Ports, corev1.ServicePort{NodePort: s.Spec.HealthCheckNodePort}) {
			if op.NodePort != 0 {
				// The API server's node port allocator is one bitmap for
				// all protocols: another Service may not reuse the number.
				for _, proto := range []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP} {
					taken[fmt.Sprintf("%s/%d", proto, op.NodePort)] = s.Namespace + "/" + s.Name
				}
			}
		}
	}
	for j := 0; j < i; j++ {
		op := svc.Spec.Ports[j]
		taken[fmt.Sprintf("%s/%d", op.Protocol, op.NodePort)] = svc.Namespace + "/" + svc.Name
	}
	if p.NodePort == 0 && old != nil {
		for _, op := range old.Spec.Ports {
			if op.Name == p.Name && op.Protocol == p.Protocol && op.NodePort != 0 {
				p.NodePort = op.NodePort
			}
		}
	}
	if p.NodePort != 0 {
		if p.NodePort < NodePortMin || p.NodePort > NodePortMax {
			return errorf(source, "%s: %s %d: outside the node port range %d-%d", where, field, p.NodePort, NodePortMin, NodePortMax)
		}
		if owner, clash := taken[fmt.Sprintf("%s/%d", p.Protocol, p.NodePort)]; clash {
			return errorf(source, "%s: %s %d: port clash: already allocated to Service %s", where, field, p.NodePort, owner)
		}
		return nil
	}
	if a := svc.Spec.AllocateLoadBalancerNodePorts; svc.Spec.Type == corev1.ServiceTypeLoadBalancer && a != nil && !*a {
		return nil // only the node ports the manifest names
	}
	for port := int32(NodePortMin); port <= NodePortMax; port++ {
		if _, clash := taken[fmt.Sprintf("%s/%d", p.Protocol, port)]; !clash {
			p.NodePort = port
			return nil
		}
	}
	return errorf(source, "%s: %s: no free node port left", where, field)
}
