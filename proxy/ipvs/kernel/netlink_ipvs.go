package kernel

import (
	"fmt"
	"net"
	"net/netip"

	libipvs "github.com/moby/ipvs"
	"golang.org/x/sys/unix"
)

// toService converts to moby/ipvs: an IPv4 service is AF_INET with netmask
// 0xffffffff, an IPv6 one AF_INET6 with netmask 128. Upstream:
// toIPVSService.
func toService(vs VirtualServer) *libipvs.Service {
	s := &libipvs.Service{
		Address:       net.IP(vs.Address.AsSlice()),
		Protocol:      uint16(vs.Protocol.Number()),
		Port:          vs.Port,
		SchedName:     vs.Scheduler,
		Flags:         vs.Flags,
		Timeout:       vs.Timeout,
		AddressFamily: unix.AF_INET,
		Netmask:       0xffffffff,
	}
	if vs.Address.Is6() {
		s.AddressFamily, s.Netmask = unix.AF_INET6, 128
	}
	return s
}

// addressFamily is AF_INET or AF_INET6, as a's family.
func addressFamily(a netip.Addr) uint16 {
	if a.Is6() {
		return unix.AF_INET6
	}
	return unix.AF_INET
}

// toDestination converts to moby/ipvs. ConnectionFlags 0 is
// IP_VS_CONN_F_MASQ: NAT forwarding (ipvsadm -m). Upstream:
// toIPVSDestination.
func toDestination(rs RealServer) *libipvs.Destination {
	return &libipvs.Destination{
		Address:       net.IP(rs.Address.AsSlice()),
		Port:          rs.Port,
		Weight:        rs.Weight,
		AddressFamily: addressFamily(rs.Address),
	}
}

func (k *Netlink) ipvsCall(what string, fn func(h *libipvs.Handle) error) error {
	if k.ipvs == nil {
		return fmt.Errorf("%s: %w", what, ErrNoIPVS)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := fn(k.ipvs); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// VirtualServers implements IPVS: the IPv4 and IPv6 services.
// Firewall-mark services are left out: svclab never makes them.
func (k *Netlink) VirtualServers() ([]VirtualServer, error) {
	var out []VirtualServer
	err := k.ipvsCall("ipvsadm -L -n", func(h *libipvs.Handle) error {
		svcs, err := h.GetServices()
		if err != nil {
			return err
		}
		for _, s := range svcs {
			if s.FWMark != 0 || (s.AddressFamily != unix.AF_INET && s.AddressFamily != unix.AF_INET6) {
				continue
			}
			addr, ok := netip.AddrFromSlice(s.Address)
			if !ok {
				continue
			}
			out = append(out, VirtualServer{
				Address:   addr.Unmap(),
				Protocol:  ProtocolFromNumber(uint8(s.Protocol)),
				Port:      s.Port,
				Scheduler: s.SchedName,
				Flags:     s.Flags &^ FlagHashed,
				Timeout:   s.Timeout,
			})
		}
		return nil
	})
	return out, err
}

// RealServers implements IPVS.
func (k *Netlink) RealServers(vs VirtualServer) ([]RealServer, error) {
	var out []RealServer
	err := k.ipvsCall("ipvsadm -L -n "+vs.Target(), func(h *libipvs.Handle) error {
		dsts, err := h.GetDestinations(toService(vs))
		if err != nil {
			return err
		}
		for _, d := range dsts {
			addr, ok := netip.AddrFromSlice(d.Address)
			if !ok {
				continue
			}
			out = append(out, RealServer{
				Address:      addr.Unmap(),
				Port:         d.Port,
				Weight:       d.Weight,
				ActiveConn:   d.ActiveConnections,
				InactiveConn: d.InactiveConnections,
			})
		}
		return nil
	})
	return out, err
}

// AddVirtualServer implements IPVS.
func (k *Netlink) AddVirtualServer(vs VirtualServer) error {
	return k.ipvsCall("ipvsadm -A "+vs.Target()+" "+vs.Options(), func(h *libipvs.Handle) error {
		return h.NewService(toService(vs))
	})
}

// UpdateVirtualServer implements IPVS.
func (k *Netlink) UpdateVirtualServer(vs VirtualServer) error {
	return k.ipvsCall("ipvsadm -E "+vs.Target()+" "+vs.Options(), func(h *libipvs.Handle) error {
		return h.UpdateService(toService(vs))
	})
}

// DeleteVirtualServer implements IPVS.
func (k *Netlink) DeleteVirtualServer(vs VirtualServer) error {
	return k.ipvsCall("ipvsadm -D "+vs.Target(), func(h *libipvs.Handle) error {
		return h.DelService(toService(vs))
	})
}

// AddRealServer implements IPVS.
func (k *Netlink) AddRealServer(vs VirtualServer, rs RealServer) error {
	return k.ipvsCall("ipvsadm -a "+vs.Target()+" "+rs.Describe(), func(h *libipvs.Handle) error {
		return h.NewDestination(toService(vs), toDestination(rs))
	})
}

// UpdateRealServer implements IPVS.
func (k *Netlink) UpdateRealServer(vs VirtualServer, rs RealServer) error {
	return k.ipvsCall("ipvsadm -e "+vs.Target()+" "+rs.Describe(), func(h *libipvs.Handle) error {
		return h.UpdateDestination(toService(vs), toDestination(rs))
	})
}

// DeleteRealServer implements IPVS.
func (k *Netlink) DeleteRealServer(vs VirtualServer, rs RealServer) error {
	return k.ipvsCall("ipvsadm -d "+vs.Target()+" -r "+rs.Key(), func(h *libipvs.Handle) error {
		return h.DelDestination(toService(vs), toDestination(rs))
	})
}

// SetTimeouts implements IPVS.
func (k *Netlink) SetTimeouts(t Timeouts) error {
	return k.ipvsCall(fmt.Sprintf("ipvsadm --set %d %d %d", int(t.TCP.Seconds()), int(t.TCPFin.Seconds()), int(t.UDP.Seconds())),
		func(h *libipvs.Handle) error {
			return h.SetConfig(&libipvs.Config{TimeoutTCP: t.TCP, TimeoutTCPFin: t.TCPFin, TimeoutUDP: t.UDP})
		})
}

// Timeouts implements IPVS.
func (k *Netlink) Timeouts() (Timeouts, error) {
	var t Timeouts
	err := k.ipvsCall("ipvsadm -L --timeout", func(h *libipvs.Handle) error {
		c, err := h.GetConfig()
		if err != nil {
			return err
		}
		t = Timeouts{TCP: c.TimeoutTCP, TCPFin: c.TimeoutTCPFin, UDP: c.TimeoutUDP}
		return nil
	})
	return t, err
}
