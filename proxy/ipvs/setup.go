package ipvs

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// Sysctls upstream's NewProxier sets.
const (
	sysctlVSConnTrack             = "net/ipv4/vs/conntrack"
	sysctlConnReuse               = "net/ipv4/vs/conn_reuse_mode"
	sysctlExpireNoDestConn        = "net/ipv4/vs/expire_nodest_conn"
	sysctlExpireQuiescentTemplate = "net/ipv4/vs/expire_quiescent_template"
	sysctlForward                 = "net/ipv4/ip_forward"
	sysctlArpIgnore               = "net/ipv4/conf/all/arp_ignore"
	sysctlArpAnnounce             = "net/ipv4/conf/all/arp_announce"
)

// probeVirtualServer is the service CheckScheduler creates and deletes
// again: an address from TEST-NET-2 (RFC 5737), as upstream's
// CanUseIPVSProxier.
var probeVirtualServer = kernel.VirtualServer{Address: netip.MustParseAddr("198.51.100.0"), Protocol: kernel.TCP, Port: 20000}

// CheckScheduler makes sure the kernel has the IPVS scheduler: it is
// enough that an existing service uses it; otherwise a probe service is
// created with it (the kernel loads ip_vs_<name> on demand) and deleted.
// Upstream: CanUseIPVSProxier.
func CheckScheduler(k kernel.IPVS, scheduler string) error {
	if scheduler == "" {
		scheduler = DefaultScheduler
	}
	field := fmt.Sprintf("ipvs.scheduler %q", scheduler)
	vss, err := k.VirtualServers()
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	for _, vs := range vss {
		if vs.Scheduler == scheduler {
			return nil
		}
	}
	probe := probeVirtualServer
	probe.Scheduler = scheduler
	if err := k.AddVirtualServer(probe); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("%s: the kernel has no IPVS scheduler %s (module ip_vs_%s)", field, scheduler, scheduler)
		}
		return fmt.Errorf("%s: creating a probe service: %w", field, err)
	}
	vss, err = k.VirtualServers()
	if err == nil && !containsKey(vss, probe) {
		err = errors.New("the probe service was accepted but is not listed: IPVS does not work in this kernel")
	}
	if derr := k.DeleteVirtualServer(probe); derr != nil {
		err = errors.Join(err, derr)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

func containsKey(vss []kernel.VirtualServer, vs kernel.VirtualServer) bool {
	for _, v := range vss {
		if v.SameKey(vs) {
			return true
		}
	}
	return false
}

// SetupKernel sets what upstream's NewProxier sets before the first sync:
// the IPVS sysctls, ip_forward, strictARP's ARP sysctls, and the IPVS
// timeouts (ipvsadm --set). It writes a sysctl only when its value
// differs, like proxyutil.EnsureSysctl.
func SetupKernel(k kernel.Interface, o Options, release string) error {
	want := []struct{ key, value string }{
		{sysctlVSConnTrack, "1"},
	}
	// conn_reuse_mode=0 works around a connection-reuse bug of kernels
	// 4.1 to 5.8; from 5.9 on it is left alone (kubernetes/kubernetes#93297).
	if major, minor, ok := kernelVersion(release); ok && (major > 4 || major == 4 && minor >= 1) && (major < 5 || major == 5 && minor < 9) {
		want = append(want, struct{ key, value string }{sysctlConnReuse, "0"})
	}
	want = append(want, []struct{ key, value string }{
		{sysctlExpireNoDestConn, "1"},
		{sysctlExpireQuiescentTemplate, "1"},
		{sysctlForward, "1"},
	}...)
	if o.StrictARP {
		want = append(want, []struct{ key, value string }{{sysctlArpIgnore, "1"}, {sysctlArpAnnounce, "2"}}...)
	}
	for _, s := range want {
		cur, err := k.Sysctl(s.key)
		if err != nil {
			return err
		}
		if cur == s.value {
			continue
		}
		if err := k.SetSysctl(s.key, s.value); err != nil {
			return err
		}
	}
	if o.Timeouts != (kernel.Timeouts{}) {
		if err := k.SetTimeouts(o.Timeouts); err != nil {
			return fmt.Errorf("ipvs.tcpTimeout/tcpFinTimeout/udpTimeout: %w", err)
		}
	}
	return nil
}

// kernelVersion reads "6.1.0-18-amd64" as 6, 1.
func kernelVersion(release string) (major, minor int, ok bool) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minorStr := parts[1]
	if i := strings.IndexFunc(minorStr, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minorStr = minorStr[:i]
	}
	minor, err2 := strconv.Atoi(minorStr)
	return major, minor, err1 == nil && err2 == nil
}
