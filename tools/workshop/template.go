package workshop

import (
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/svclab/svclab/proxy/iptables"
)

// Facts are the names and addresses of a live lab that templates use.
// Live labs give them from their store and network plan (LabFacts);
// validation uses placeholder ones.
type Facts interface {
	// ClusterIP is the Service's cluster IP.
	ClusterIP(namespace, name string) (string, error)
	// NodePort is the node port of the Service's port (its name or number).
	NodePort(namespace, name, port string) (int, error)
	// PodIP is the pod's address.
	PodIP(pod string) (string, error)
	// HostIP is the address of a node or client on its LAN.
	HostIP(host string) (string, error)
	// VTEPIP is a node's VXLAN device's address.
	VTEPIP(node string) (string, error)
	// VXLANDevice, VNI and VXLANPort are a node's VXLAN device's name
	// (flannel.1, vxlan.calico), network identifier and UDP port.
	VXLANDevice(node string) (string, error)
	VNI(node string) (int, error)
	VXLANPort(node string) (int, error)
	// CNI is the lab's CNI (flannel-vxlan, calico-proxyarp, canal).
	CNI() string
}

// maxExpansion bounds one template's expansion.
const maxExpansion = 64 << 10

// templateFuncs are the functions a lesson's templates may call:
//
//	svcChain NS NAME PORT PROTO      KUBE-SVC-… of the Service port (upstream's hash)
//	extChain NS NAME PORT PROTO      KUBE-EXT-…
//	fwChain  NS NAME PORT PROTO      KUBE-FW-…
//	xlbChain NS NAME PORT PROTO      KUBE-SVL-… (externalTrafficPolicy/internalTrafficPolicy Local)
//	sepChain NS NAME PORT PROTO POD TARGETPORT   KUBE-SEP-… of one endpoint
//	clusterIP NS NAME, nodePort NS NAME PORT, podIP POD, nodeIP HOST, hostIP HOST, vtepIP NODE
//	vxlanDevice NODE, vni NODE, vxlanPort NODE   the node's VXLAN device
//	cni                              the lab's CNI, for {{ if eq cni "flannel-vxlan" }}…{{ else }}…{{ end }}
//	re S                             S with regexp metacharacters escaped
//	clusterIPOf, podIPOf, hostIPOf, hostPort   one family's addresses (families.go), when f has Families
//
// PORT is the Service port's name ("" for an unnamed port), PROTO tcp,
// udp or sctp, as kube-proxy hashes "NS/NAME:PORT" + PROTO.
func templateFuncs(f Facts) template.FuncMap {
	// spn is the service port name kube-proxy hashes (model.ServicePortName's
	// String): "ns/name:port", or "ns/name" for an unnamed port (the
	// trailing ":" of unnamed ports went in Kubernetes 1.19).
	spn := func(ns, name, port string) string {
		if port == "" {
			return ns + "/" + name
		}
		return ns + "/" + name + ":" + port
	}
	funcs := template.FuncMap{
		"svcChain": func(ns, name, port, proto string) string {
			return iptables.ServiceChainName(spn(ns, name, port), proto)
		},
		"extChain": func(ns, name, port, proto string) string {
			return iptables.ExternalChainName(spn(ns, name, port), proto)
		},
		"fwChain": func(ns, name, port, proto string) string {
			return iptables.FirewallChainName(spn(ns, name, port), proto)
		},
		"xlbChain": func(ns, name, port, proto string) string {
			return iptables.LocalServiceChainName(spn(ns, name, port), proto)
		},
		"sepChain": func(ns, name, port, proto, pod string, targetPort int) (string, error) {
			ip, err := f.PodIP(pod)
			if err != nil {
				return "", err
			}
			ep := ip + ":" + fmt.Sprint(targetPort)
			if strings.Contains(ip, ":") {
				ep = "[" + ip + "]:" + fmt.Sprint(targetPort)
			}
			return iptables.EndpointChainName(spn(ns, name, port), proto, ep), nil
		},
		"clusterIP": f.ClusterIP,
		"nodePort": func(ns, name string, port any) (int, error) {
			return f.NodePort(ns, name, fmt.Sprint(port))
		},
		"podIP":       f.PodIP,
		"nodeIP":      f.HostIP,
		"hostIP":      f.HostIP,
		"vtepIP":      f.VTEPIP,
		"vxlanDevice": f.VXLANDevice,
		"vni":         f.VNI,
		"vxlanPort":   f.VXLANPort,
		"cni":         f.CNI,
		"re":          regexp.QuoteMeta,
	}
	if fam, ok := f.(Families); ok {
		for name, fn := range familyFuncs(fam) {
			funcs[name] = fn
		}
	}
	return funcs
}

// Expand expands one template string of a lesson with the lab's facts.
// A string without "{{" is returned as is.
func Expand(text string, f Facts) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := template.New("").Option("missingkey=error").Funcs(templateFuncs(f)).Parse(text)
	if err != nil {
		return "", fmt.Errorf("template %q: %w", text, cleanTemplateError(err))
	}
	var b limitedBuilder
	if err := t.Execute(&b, nil); err != nil {
		return "", fmt.Errorf("template %q: %w", text, cleanTemplateError(err))
	}
	return b.String(), nil
}

// expandAll expands each of texts.
func expandAll(texts []string, f Facts) ([]string, error) {
	out := make([]string, len(texts))
	for i, t := range texts {
		s, err := Expand(t, f)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// cleanTemplateError drops text/template's "template: :1:2: executing \"\"
// at <…>:" prefix down to what went wrong.
func cleanTemplateError(err error) error {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": error calling "); i >= 0 {
		msg = msg[i+2:]
	}
	msg = strings.TrimPrefix(msg, "template: ")
	return fmt.Errorf("%s", msg)
}

// limitedBuilder is a strings.Builder that refuses to grow past maxExpansion.
type limitedBuilder struct{ strings.Builder }

func (b *limitedBuilder) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxExpansion {
		return 0, fmt.Errorf("expands to more than %d bytes", maxExpansion)
	}
	return b.Builder.Write(p)
}

// placeholderFacts stand for a lab's facts when a lesson is validated:
// every name and address is valid and the same each time.
type placeholderFacts struct{}

func (placeholderFacts) ClusterIP(string, string) (string, error)     { return "10.96.0.10", nil }
func (placeholderFacts) NodePort(string, string, string) (int, error) { return 30000, nil }
func (placeholderFacts) PodIP(string) (string, error)                 { return "10.244.1.2", nil }
func (placeholderFacts) HostIP(string) (string, error)                { return "192.168.16.73", nil }
func (placeholderFacts) VTEPIP(string) (string, error)                { return "10.244.1.0", nil }
func (placeholderFacts) VXLANDevice(string) (string, error)           { return "flannel.1", nil }
func (placeholderFacts) VNI(string) (int, error)                      { return 1, nil }
func (placeholderFacts) VXLANPort(string) (int, error)                { return 8472, nil }
func (placeholderFacts) CNI() string                                  { return "canal" }
func (placeholderFacts) ClusterIPs(string, string) ([]string, error) {
	return []string{"10.96.0.10", "fd00:10:96::a"}, nil
}
func (placeholderFacts) PodIPs(string) ([]string, error) {
	return []string{"10.244.1.2", "fd00:10:244:1::2"}, nil
}
func (placeholderFacts) HostIPs(string) ([]string, error) {
	return []string{"192.168.16.73", "fd00::c0a8:1049"}, nil
}
