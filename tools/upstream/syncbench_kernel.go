package upstream

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"os/exec"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/proxy/iptables"
)

// The generated cluster's one service port (modeltest.ClusterObjects).
const (
	benchPortName   = "http"
	benchProtocol   = "tcp"
	benchTargetPort = "8080"
)

// kernelCheck says whether a change is in the kernel of the namespace
// this process runs in, with one command: both proxies write the same
// names, so the same check serves both.
type kernelCheck interface {
	// endpoint: the slice's first endpoint has its own chain with its DNAT.
	endpoint(slice *discoveryv1.EndpointSlice) error
	// service: the Service's cluster IP leads to its endpoints.
	service(svc *corev1.Service) error
}

// svcs are the Services of the generated cluster (the IPVS check finds a
// slice's cluster IP among them).
func newKernelCheck(mode string, svcs []*corev1.Service) (kernelCheck, error) {
	switch mode {
	case ModeIPTables:
		return iptablesCheck{}, nil
	case ModeNFTables:
		return nftablesCheck{}, nil
	case ModeIPVS:
		return newIPVSCheck(svcs)
	}
	return nil, fmt.Errorf("mode %q: want iptables, nftables or ipvs", mode)
}

// iptablesCheck lists one chain of the nat table (`iptables -t nat -S
// CHAIN`). iptables-restore commits its whole payload at once, so one
// chain of the change being there means all of it is.
type iptablesCheck struct{}

func (iptablesCheck) endpoint(sl *discoveryv1.EndpointSlice) error {
	ep := sl.Endpoints[0].Addresses[0] + ":" + benchTargetPort
	chain := iptables.EndpointChainName(servicePortName(sl.Namespace, sl.Labels[discoveryv1.LabelServiceName]), benchProtocol, ep)
	return lookFor(exec.Command("iptables", "-w", "5", "-t", "nat", "-S", chain), "--to-destination "+ep)
}

func (iptablesCheck) service(svc *corev1.Service) error {
	chain := iptables.ServiceChainName(servicePortName(svc.Namespace, svc.Name), benchProtocol)
	return lookFor(exec.Command("iptables", "-w", "5", "-t", "nat", "-S", chain), "-j KUBE-SEP-")
}

// servicePortName is upstream's ServicePortName.String().
func servicePortName(namespace, name string) string {
	return namespace + "/" + name + ":" + benchPortName
}

// nftHashAndTruncate is upstream's nftables hashAndTruncate for the short
// names of the generated cluster (never truncated).
func nftHashAndTruncate(name string) string {
	hash := sha256.Sum256([]byte(name))
	return base32.StdEncoding.EncodeToString(hash[:])[:8] + "-" + name
}

// lookFor runs cmd and wants one of wants in its output.
func lookFor(cmd *exec.Cmd, wants ...string) error {
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("not in the kernel: %s: %v: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(string(out)))
	}
	for _, want := range wants {
		if strings.Contains(string(out), want) {
			return nil
		}
	}
	return fmt.Errorf("not in the kernel: %s lacks %q:\n%s", strings.Join(cmd.Args, " "), wants, out)
}
