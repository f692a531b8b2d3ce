package network

import "net/netip"

// lastAddr is the last address of p's subnet (the IPv4 broadcast address).
func lastAddr(p netip.Prefix) netip.Addr {
	if p.Addr().Is6() {
		b := p.Masked().Addr().As16()
		for i := p.Bits(); i < 128; i++ {
			b[i/8] |= 0x80 >> (i % 8)
		}
		return netip.AddrFrom16(b)
	}
	a := p.Masked().Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= uint32(1)<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// nthAddr is the n-th address of p's subnet (0 is the network address).
func nthAddr(p netip.Prefix, n int) netip.Addr {
	a := p.Masked().Addr()
	for range n {
		a = a.Next()
	}
	return a
}

// host32 is a as a /32 prefix.
func host32(a netip.Addr) netip.Prefix { return netip.PrefixFrom(a, 32) }

// hostPrefix is a as a host prefix of its family: a /32 or a /128.
func hostPrefix(a netip.Addr) netip.Prefix { return netip.PrefixFrom(a, a.BitLen()) }
