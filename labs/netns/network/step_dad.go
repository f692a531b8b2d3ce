package network

import (
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/nldump"
)

// dadTimeout bounds WaitDAD, as the CNI plugins' ip.SettleAddresses
// bounds its wait (10 s): DAD itself takes about a second.
const dadTimeout = 10 * time.Second

// WaitDAD waits until no IPv6 address of a link is tentative any more
// (duplicate address detection is over), as the CNI plugins'
// ip.SettleAddresses does, but woken by the kernel's address
// notifications rather than by polling. An address whose DAD failed is an
// error.
//
//	ip netns exec <NS> sh -c 'while ip -6 addr show dev <Link> tentative | grep -q .; do sleep 0.1; done'
type WaitDAD struct {
	NS, Link string
}

func (s WaitDAD) Namespace() string { return s.NS }
func (s WaitDAD) Command() string {
	return fmt.Sprintf("ip netns exec %s sh -c 'while ip -6 addr show dev %s tentative | grep -q .; do sleep 0.1; done'", s.NS, s.Link)
}

func (s WaitDAD) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Link)
	if err != nil {
		return err
	}
	updates := make(chan netlink.AddrUpdate, 64)
	done := make(chan struct{})
	defer close(done)
	// Subscribe first, then look: a change between the two is seen.
	if err := netlink.AddrSubscribeAt(c.ns, updates, done); err != nil {
		return fmt.Errorf("subscribe to address changes: %w", err)
	}
	deadline := time.NewTimer(dadTimeout)
	defer deadline.Stop()
	for {
		settled, err := dadSettled(c, l)
		if err != nil || settled {
			return err
		}
		select {
		case _, ok := <-updates:
			if !ok {
				return fmt.Errorf("address notifications of %s ended", s.Link)
			}
		case <-deadline.C:
			return fmt.Errorf("%s still has tentative IPv6 addresses after %s", s.Link, dadTimeout)
		}
	}
}

// dadSettled says whether no IPv6 address of l is tentative, and fails
// when one's DAD failed.
func dadSettled(c *nsConn, l netlink.Link) (bool, error) {
	addrs, err := nldump.Retry(func() ([]netlink.Addr, error) { return c.nl.AddrList(l, unix.AF_INET6) })
	if err != nil {
		return false, err
	}
	for _, a := range addrs {
		if a.Flags&unix.IFA_F_DADFAILED != 0 {
			return false, fmt.Errorf("duplicate address detection failed for %s on %s", a.IPNet, l.Attrs().Name)
		}
		if a.Flags&unix.IFA_F_TENTATIVE != 0 {
			return false, nil
		}
	}
	return true, nil
}
