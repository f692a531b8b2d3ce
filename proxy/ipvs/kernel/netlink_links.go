package kernel

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/nldump"
)

func isLinkNotFound(err error) bool {
	var nf netlink.LinkNotFoundError
	return errors.As(err, &nf)
}

// EnsureDummy implements Links. Upstream: netlinkHandle.EnsureDummyDevice.
func (k *Netlink) EnsureDummy(name string) error {
	_, err := k.nl.LinkByName(name)
	if err == nil {
		return nil
	}
	if !isLinkNotFound(err) {
		return fmt.Errorf("ip link show %s: %w", name, err)
	}
	loadDummyModuleQuietly()
	if err := k.nl.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("ip link add %s type dummy: %w (the kernel has no dummy device support, CONFIG_DUMMY)", name, err)
		}
		return fmt.Errorf("ip link add %s type dummy: %w", name, err)
	}
	return nil
}

// DeleteDummy implements Links. Upstream: netlinkHandle.DeleteDummyDevice.
func (k *Netlink) DeleteDummy(name string) error {
	link, err := k.nl.LinkByName(name)
	if isLinkNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ip link show %s: %w", name, err)
	}
	if link.Type() != "dummy" {
		return fmt.Errorf("ip link del %s: it is a %s device, not the dummy device kube-proxy makes; left alone", name, link.Type())
	}
	if err := k.nl.LinkDel(link); err != nil {
		return fmt.Errorf("ip link del %s: %w", name, err)
	}
	return nil
}

// Addresses implements Links.
func (k *Netlink) Addresses(dev string) ([]netip.Addr, bool, error) {
	link, err := k.nl.LinkByName(dev)
	if isLinkNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("ip link show %s: %w", dev, err)
	}
	addrs, err := nldump.Retry(func() ([]netlink.Addr, error) { return k.nl.AddrList(link, netlink.FAMILY_ALL) })
	if err != nil {
		return nil, true, fmt.Errorf("ip addr show dev %s: %w", dev, err)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP); ok && !ip.Unmap().IsLinkLocalUnicast() {
			out = append(out, ip.Unmap())
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out), true, nil
}

func hostNet(addr netip.Addr) *net.IPNet {
	return &net.IPNet{IP: net.IP(addr.AsSlice()), Mask: net.CIDRMask(addr.BitLen(), addr.BitLen())}
}

// AddAddress implements Links. Upstream: netlinkHandle.EnsureAddressBind.
func (k *Netlink) AddAddress(dev string, addr netip.Addr) error {
	what := fmt.Sprintf("ip addr add %s/%d dev %s", addr, addr.BitLen(), dev)
	link, err := k.nl.LinkByName(dev)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := k.nl.AddrAdd(link, &netlink.Addr{IPNet: hostNet(addr)}); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// DelAddress implements Links. Upstream: netlinkHandle.UnbindAddress.
func (k *Netlink) DelAddress(dev string, addr netip.Addr) error {
	what := fmt.Sprintf("ip addr del %s/%d dev %s", addr, addr.BitLen(), dev)
	link, err := k.nl.LinkByName(dev)
	if isLinkNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	err = k.nl.AddrDel(link, &netlink.Addr{IPNet: hostNet(addr)})
	if err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) && !errors.Is(err, unix.ENXIO) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// NodeAddresses implements Links. It asks the kernel for the excepted
// link's index, and takes the addresses from what nodeAddrs keeps: one
// dump at the first call (and after lost notifications), then only the
// changes since. (Upstream's GetAllLocalAddressesExcept lists the links
// and dumps every address once per link, at every sync.)
func (k *Netlink) NodeAddresses(except string) ([]netip.Addr, error) {
	skip := 0 // no link has index 0
	if l, err := k.nl.LinkByName(except); err == nil {
		skip = l.Attrs().Index
	} else if !isLinkNotFound(err) {
		return nil, fmt.Errorf("ip link show %s: %w", except, err)
	}
	k.addrs.mu.Lock()
	defer k.addrs.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if k.addrs.sock == nil {
			if err := k.addrs.open(k.ns, k.nl); err != nil {
				return nil, err
			}
		}
		err := k.addrs.catchUp()
		if err == nil {
			return k.addrs.except(skip), nil
		}
		k.addrs.close()
		if !errors.Is(err, errLost) || attempt > 0 {
			return nil, err
		}
	}
}

// loadDummyModuleQuietly loads the dummy driver, when it is a module not yet
// loaded, with numdummies=0. Left to the kernel's autoload, the module's
// default numdummies=1 creates a device dummy0 in the machine's root network
// namespace — a change to the host that svclab must not make.
func loadDummyModuleQuietly() {
	if _, err := os.Stat("/sys/module/dummy"); err == nil {
		return // loaded or built in
	}
	exec.Command("modprobe", "-q", "dummy", "numdummies=0").Run() //nolint:errcheck // built-in or unavailable: LinkAdd says
}
