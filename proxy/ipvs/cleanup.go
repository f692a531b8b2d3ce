package ipvs

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/iptsave"
	"github.com/svclab/svclab/proxy/iptables/chains"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// kubeProxyChains are the chains either kube-proxy mode creates, per
// table; per-service chains (KUBE-SVC-, KUBE-SEP-, ...) are recognised by
// chains.IsPerService. Kubelet's own chains (chains.KubeletFirewall,
// KUBE-KUBELET-CANARY) are not kube-proxy's and are left alone, as
// upstream's cleanup leaves them.
var kubeProxyChains = map[string][]string{
	"mangle": {chains.ProxyCanary}, // iptables mode's third canary
	"nat": {
		chains.Services, chains.NodePorts, chains.Postrouting, chains.MarkMasq, chains.ProxyCanary, // iptables mode
		ChainNodePort, ChainLoadBalancer, // ipvs mode
	},
	"filter": {
		chains.Services, chains.ExternalServices, chains.Forward, chains.NodePorts, chains.ProxyFirewall, chains.ProxyCanary, // iptables mode
		ChainNodePort, ChainSourceRangesFirewall, ChainIPVSFilter, ChainIPVSOutFilter, // ipvs mode
	},
}

// leftoverTables are the tables kube-proxy's modes write to.
var leftoverTables = []string{"nat", "filter", "mangle"}

// IsKubeProxyChain reports whether chain, in table, is one that a
// kube-proxy mode creates.
func IsKubeProxyChain(table, chain string) bool {
	return slices.Contains(kubeProxyChains[table], chain) || (table == "nat" && chains.IsPerService(chain))
}

// Cleanup removes from a node what kube-proxy's modes leave there, like
// `kube-proxy --cleanup`: the IPVS services kube-proxy made (see
// FindLeftovers for how they are recognised; upstream flushes every IPVS
// service instead), the kube-ipvs0 device, the KUBE-* chains of both
// modes with the rules that jump to them, and then the mode's ipsets,
// which the kernel refuses to destroy while a rule uses them. It goes on
// after a failure and returns all of them joined. On a kernel without
// IPVS it cleans the rest. ipts are the iptables runners whose chains go:
// on a dual-stack node the iptables and the ip6tables one, as upstream's
// CleanupLeftovers takes one per family (the sets one family's rules still
// use cannot be destroyed until those rules are gone).
func Cleanup(k kernel.Interface, ipts ...iptkernel.Runner) error {
	var errs []error
	vss, err := kubeProxyVirtualServers(k)
	if err != nil {
		errs = append(errs, err)
	}
	for _, vs := range vss {
		if err := k.DeleteVirtualServer(vs); err != nil {
			errs = append(errs, err)
		}
	}
	if err := k.DeleteDummy(DummyDevice); err != nil {
		errs = append(errs, err)
	}
	for _, ipt := range ipts {
		errs = append(errs, cleanupChains(ipt)...)
	}
	sets, err := k.ListSets()
	if err != nil {
		errs = append(errs, err)
	}
	for _, s := range sets {
		if IsKubeProxySet(s.Name) {
			if err := k.DestroySet(s.Name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// cleanupChains removes kube-proxy's chains, in every table, through one
// iptables runner.
func cleanupChains(ipt iptkernel.Runner) []error {
	var errs []error
	for _, table := range leftoverTables {
		save, err := ipt.Save(table)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		payload := cleanupPayload(table, save)
		if payload == nil {
			continue
		}
		if err := ipt.Restore(payload); err != nil {
			errs = append(errs, fmt.Errorf("removing kube-proxy's %s chains: %w", table, err))
		}
	}
	return errs
}

// cleanupPayload is the iptables-restore input that deletes kube-proxy's
// chains in one table of an iptables-save dump, with every rule elsewhere
// that jumps to them; nil when there are none. Upstream:
// cleanupIptablesLeftovers of both modes.
func cleanupPayload(table string, save []byte) []byte {
	var doomed []string
	for _, c := range iptsave.ChainNames(string(save)) {
		if IsKubeProxyChain(table, c) {
			doomed = append(doomed, c)
		}
	}
	if len(doomed) == 0 {
		return nil
	}
	var l lines
	l.write("*" + table)
	for _, c := range doomed {
		l.write(":" + c + " - [0:0]") // flush
	}
	for _, r := range jumpsInto(doomed, string(save)) {
		l.write("-D", r.Chain, r.Spec)
	}
	for _, c := range doomed {
		l.write("-X", c)
	}
	l.write("COMMIT")
	return l
}

// jumpsInto lists the rules of save, outside the doomed chains, that jump
// (-j or -g) to one of them. It reads line by line (iptsave.ParseLine) and
// skips what it cannot read.
func jumpsInto(doomed []string, save string) []iptsave.Line {
	var out []iptsave.Line
	for _, raw := range strings.Split(save, "\n") {
		l, err := iptsave.ParseLine(raw)
		if err != nil || l.Kind != iptsave.Command || l.Op != "-A" || slices.Contains(doomed, l.Chain) {
			continue
		}
		if slices.Contains(doomed, ruleTarget(l.Spec)) {
			out = append(out, l)
		}
	}
	return out
}

// ruleTarget is the chain or target a rule's spec jumps (-j) or goes (-g)
// to, "" when none.
func ruleTarget(spec string) string {
	args, err := iptsave.Fields(spec)
	if err != nil {
		return ""
	}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-j" || args[i] == "-g" {
			return args[i+1]
		}
	}
	return ""
}

// kubeProxyVirtualServers lists the IPVS services kube-proxy made, of
// either family: those whose address is on kube-ipvs0, whose address:port
// is in one of the mode's service sets (KUBE-* or KUBE-6-*), or whose port
// is in a node port set. A kernel without IPVS has none.
func kubeProxyVirtualServers(k kernel.Interface) ([]kernel.VirtualServer, error) {
	vss, err := k.VirtualServers()
	if errors.Is(err, kernel.ErrNoIPVS) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	bound, _, err := k.Addresses(DummyDevice)
	if err != nil {
		return nil, err
	}
	members := map[string]map[string]bool{} // by the IPv4 name: both families' members
	for _, set := range []string{SetClusterIP, SetExternalIP, SetExternalIPLocal, SetLoadBalancer, SetNodePortTCP, SetNodePortUDP, SetNodePortSCTP} {
		m := map[string]bool{}
		for _, family := range []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol} {
			_, entries, _, err := k.Entries(familySetName(family, set))
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				m[e] = true
			}
		}
		members[set] = m
	}
	var out []kernel.VirtualServer
	for _, vs := range vss {
		entry := vs.Address.String() + "," + vs.Protocol.Lower() + ":" + strconv.Itoa(int(vs.Port))
		port := strconv.Itoa(int(vs.Port))
		mine := slices.Contains(bound, vs.Address) ||
			members[SetClusterIP][entry] || members[SetExternalIP][entry] || members[SetExternalIPLocal][entry] ||
			members[SetLoadBalancer][entry] || members[SetNodePortSCTP][entry] ||
			(vs.Protocol == kernel.TCP && members[SetNodePortTCP][port]) ||
			(vs.Protocol == kernel.UDP && members[SetNodePortUDP][port])
		if mine {
			out = append(out, vs)
		}
	}
	return out, nil
}
