package kernel

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"

	libipvs "github.com/moby/ipvs"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ErrNoIPVS is returned by every IPVS method of a Netlink whose kernel has
// no IPVS (CONFIG_IP_VS unset, or the ip_vs module cannot be loaded).
var ErrNoIPVS = errors.New("the kernel has no IPVS (CONFIG_IP_VS; `modprobe ip_vs` did not help)")

// Netlink is the real Interface for one network namespace. It is safe for
// concurrent use.
type Netlink struct {
	// nsName is the named namespace ("" for the caller's own).
	nsName string
	ns     netns.NsHandle

	mu sync.Mutex // serializes IPVS requests, like upstream's runner.mu
	nl *netlink.Handle
	// ipvs is nil when the kernel has no IPVS.
	ipvs *libipvs.Handle
	// raw holds the socket for the ipset requests built here.
	raw map[int]*nl.SocketHandle
	// addrs keeps the namespace's addresses for NodeAddresses.
	addrs nodeAddrs
}

var _ Interface = (*Netlink)(nil)

// Open returns a Netlink for the named network namespace (one under
// /run/netns, as `ip netns add` makes), or for the calling process's own
// namespace when netnsName is "". It does not fail on a kernel without
// IPVS: ipsets, links and sysctls still work, and IPVS methods return
// ErrNoIPVS, so that leftovers of other modes can be cleaned up there.
func Open(netnsName string) (*Netlink, error) {
	k := &Netlink{nsName: netnsName, ns: netns.None()}
	subject := "current network namespace"
	if netnsName != "" {
		subject = "network namespace " + netnsName
		h, err := netns.GetFromPath(filepath.Join("/run/netns", netnsName))
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", subject, err)
		}
		k.ns = h
	}
	h, err := netlink.NewHandleAt(k.ns, unix.NETLINK_ROUTE, unix.NETLINK_NETFILTER)
	if err != nil {
		k.Close()
		return nil, fmt.Errorf("netlink in %s: %w", subject, err)
	}
	k.nl = h
	sock, err := nl.GetNetlinkSocketAt(k.ns, netns.None(), unix.NETLINK_NETFILTER)
	if err != nil {
		k.Close()
		return nil, fmt.Errorf("netfilter netlink socket in %s: %w", subject, err)
	}
	k.raw = map[int]*nl.SocketHandle{unix.NETLINK_NETFILTER: {Socket: sock}}
	if HasIPVS() {
		path := ""
		if netnsName != "" {
			path = filepath.Join("/run/netns", netnsName)
		}
		ih, err := libipvs.New(path)
		if err != nil {
			k.Close()
			return nil, fmt.Errorf("IPVS netlink in %s: %w", subject, err)
		}
		k.ipvs = ih
	}
	return k, nil
}

// Namespace is the namespace name given to Open ("" for the caller's own).
func (k *Netlink) Namespace() string { return k.nsName }

// IPVSAvailable returns nil when IPVS can be used, else ErrNoIPVS.
func (k *Netlink) IPVSAvailable() error {
	if k.ipvs == nil {
		return ErrNoIPVS
	}
	return nil
}

// Close releases the sockets.
func (k *Netlink) Close() {
	if k.ipvs != nil {
		k.ipvs.Close()
	}
	if k.nl != nil {
		k.nl.Close()
	}
	for _, s := range k.raw {
		s.Close()
	}
	k.addrs.close()
	if k.ns != netns.None() {
		k.ns.Close()
	}
}

var loadIPVSOnce sync.Once

// HasIPVS reports whether the kernel offers IPVS, first trying `modprobe
// ip_vs` once (as upstream and moby/ipvs do) for kernels that have it as a
// module. The check is the generic netlink family "IPVS", which exists
// only while ip_vs is loaded; generic netlink families are not per
// namespace.
func HasIPVS() bool {
	if _, err := netlink.GenlFamilyGet("IPVS"); err == nil {
		return true
	}
	loadIPVSOnce.Do(func() { _ = exec.Command("modprobe", "-q", "ip_vs").Run() })
	_, err := netlink.GenlFamilyGet("IPVS")
	return err == nil
}

// Release is the running kernel's release (`uname -r`).
func Release() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}
