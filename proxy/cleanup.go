package proxy

import (
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/ipvs"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// Cleanup removes, in the current network namespace, what kube-proxy's
// iptables and ipvs modes create — their chains and jumps, the IPVS virtual
// servers on kube-ipvs0, kube-ipvs0 itself and the mode's ipsets — and
// nothing else, like `kube-proxy --cleanup`.
func Cleanup(iptablesBackend string) error {
	backend, err := iptables.ParseBackend(iptablesBackend)
	if err != nil {
		return err
	}
	ipt, err := iptables.NewExecRunner(iptables.ExecOptions{Backend: backend})
	if err != nil {
		return err
	}
	k, err := kernel.Open("")
	if err != nil {
		return err
	}
	defer k.Close()
	return ipvs.Cleanup(k, ipt)
}
