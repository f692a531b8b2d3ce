package upstream

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	upstreamipvs "k8s.io/kubernetes/pkg/proxy/ipvs"
	utilipset "k8s.io/kubernetes/pkg/proxy/ipvs/ipset"
	utilipvs "k8s.io/kubernetes/pkg/proxy/ipvs/util"
	proxyutil "k8s.io/kubernetes/pkg/proxy/util"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	utilexec "k8s.io/utils/exec"

	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs"
	ipvskernel "github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// ModeIPVS is the IPVS mode of the sync benchmark. Kernels without IPVS
// (this project's CI host) run it in svclab's VM: RunSyncBench.
const ModeIPVS = "ipvs"

// netlinkCounted is the name the IPVS sides' netlink requests are counted
// under, next to the programs they run: a call of the proxy's kernel
// interface (IPVS services and destinations, links and addresses, and
// for svclab its ipsets), about one request each.
const netlinkCounted = "netlink"

// benchScheduler is the IPVS scheduler both sides use (upstream's default).
const benchScheduler = "rr"

// benchMasqueradeBit is iptables.masqueradeBit's default, for both sides.
const benchMasqueradeBit = 14

// newSvclabIPVSSide is svclab's IPVS mode as its backend runs it
// (proxy/ipvsmode.go, ipvs.NewBackend): the kernel through netlink
// (moby/ipvs, ipsets and links through vishvananda/netlink) and iptables
// through the exec runner, counted. Its settings are speedOptions'.
func newSvclabIPVSSide(counts *execCounts) (syncSide, error) {
	k, err := ipvskernel.Open("")
	if err != nil {
		return nil, err
	}
	if err := k.IPVSAvailable(); err != nil {
		return nil, fmt.Errorf("svclab ipvs: kernel %s: %w", ipvskernel.Release(), err)
	}
	exec, err := iptkernel.NewExecRunner(iptkernel.ExecOptions{Observe: countExecs(counts)})
	if err != nil {
		return nil, err
	}
	cidr, err := netip.ParsePrefix(speedOptions.ClusterCIDR)
	if err != nil {
		return nil, err
	}
	opts := ipvs.Options{
		Family:        corev1.IPv4Protocol,
		Scheduler:     benchScheduler,
		ClusterCIDR:   cidr,
		MasqueradeBit: benchMasqueradeBit,
		NodeIP:        netip.MustParseAddr(speedOptions.NodeIP),
	}
	backend, err := ipvs.New(k, exec, opts, nil)
	if err != nil {
		return nil, err
	}
	return newSvclabTrackerSide(func(snap *model.Snapshot) error {
		res, err := backend.Sync(snap)
		counts.add(netlinkCounted, netlinkRequests(res.Kernel))
		return err
	}, backend.ForceFullSync), nil
}

// netlinkRequests is how many of calls went to the kernel over netlink:
// all but the sysctls (files under /proc/sys).
func netlinkRequests(calls ipvskernel.Calls) int {
	return calls.Total() - calls["Sysctl"] - calls["SetSysctl"]
}

// newUpstreamIPVSSide is upstream's IPVS proxier as kube-proxy's server
// builds it (cmd/kube-proxy/app/server_linux.go): utilipvs.New() (netlink
// through moby/ipvs), utilipset.New() (the ipset program), utiliptables
// and the real sysctls, the scheduler checked by CanUseIPVSProxier first.
// Its exec layers count the programs; its IPVS interface and its netlink
// handle (kube-ipvs0 and the node's addresses) count netlink calls.
func newUpstreamIPVSSide(counts *execCounts) (syncSide, error) {
	exec := utilexec.Interface(countingExec{utilexec.New(), counts})
	ipt := utiliptables.New(utiliptables.ProtocolIPv4)
	if err := setField(ipt, "exec", exec); err != nil {
		return nil, err
	}
	ipset := utilipset.New()
	if err := setField(ipset, "exec", exec); err != nil {
		return nil, err
	}
	ipvsIface := countingIPVS{utilipvs.New(), counts}
	ctx := quietContext()
	if err := upstreamipvs.CanUseIPVSProxier(ctx, ipvsIface, ipset, benchScheduler); err != nil {
		return nil, fmt.Errorf("upstream ipvs: %w", err)
	}
	p, err := upstreamipvs.NewProxier(ctx, corev1.IPv4Protocol, ipt, ipvsIface, ipset, utilsysctl.New(),
		30*time.Second, 0, nil, false, 0, 0, 0, false, benchMasqueradeBit,
		proxyutil.NewDetectLocalByCIDR(speedOptions.ClusterCIDR), modeltest.NodeName,
		net.ParseIP(speedOptions.NodeIP), events.NewFakeRecorder(100), nil, benchScheduler, nil, false)
	if err != nil {
		return nil, fmt.Errorf("upstream ipvs NewProxier: %w", err)
	}
	handle, err := getField[upstreamipvs.NetLinkHandle](p, "netlinkHandle")
	if err != nil {
		return nil, err
	}
	if err := setField(p, "netlinkHandle", upstreamipvs.NetLinkHandle(countingNetLinkHandle{handle, counts})); err != nil {
		return nil, err
	}
	return upstreamIPVSSide{upstreamSide{upstreamEvents{p}}}, nil
}

// upstreamIPVSSide is upstream's IPVS proxier, whose every sync rebuilds
// and writes its whole state (it has no needFullSync): its hourly full
// resync is a sync.
type upstreamIPVSSide struct{ upstreamSide }

func (u upstreamIPVSSide) full() error {
	u.p.OnEndpointSlicesSynced()
	return nil
}
