package podnet

import (
	"fmt"
	"math/bits"
	"net/netip"
	"strings"
)

// AddrRange is an inclusive range of IPv4 addresses, First to Last. The
// zero AddrRange is "none".
type AddrRange struct {
	First, Last netip.Addr
}

// IsValid says whether r holds at least one address.
func (r AddrRange) IsValid() bool {
	return r.First.IsValid() && r.Last.IsValid() && r.First.Compare(r.Last) <= 0
}

// Contains says whether a lies in r.
func (r AddrRange) Contains(a netip.Addr) bool {
	return r.IsValid() && a.Is4() && r.First.Compare(a) <= 0 && a.Compare(r.Last) <= 0
}

// Size is the number of addresses in r.
func (r AddrRange) Size() uint64 {
	if !r.IsValid() {
		return 0
	}
	return uint64(u32(r.Last)-u32(r.First)) + 1
}

// String is "first-last", or the prefix when r is exactly one.
func (r AddrRange) String() string {
	if !r.IsValid() {
		return ""
	}
	if p := r.Prefixes(); len(p) == 1 {
		return p[0].String()
	}
	return r.First.String() + "-" + r.Last.String()
}

// Prefixes covers r exactly with the fewest prefixes, in address order (at
// most 62): the routes a router needs for it.
func (r AddrRange) Prefixes() []netip.Prefix {
	if !r.IsValid() {
		return nil
	}
	var out []netip.Prefix
	lo, hi := uint64(u32(r.First)), uint64(u32(r.Last))
	for lo <= hi {
		// The largest block aligned at lo that does not pass hi.
		size := uint64(1) << 32
		if lo != 0 {
			size = uint64(1) << bits.TrailingZeros64(lo)
		}
		for lo+size-1 > hi {
			size >>= 1
		}
		out = append(out, netip.PrefixFrom(addr4(uint32(lo)), 32-bits.TrailingZeros64(size)))
		lo += size
	}
	return out
}

// RangeOf is the range of a prefix's addresses.
func RangeOf(p netip.Prefix) AddrRange {
	p = p.Masked()
	return AddrRange{First: p.Addr(), Last: Broadcast(p)}
}

// ParseAddrRange parses "a.b.c.d/n" (every address of the prefix, which
// must be a network address) or "a.b.c.d-e.f.g.h" (inclusive, first not
// after last).
func ParseAddrRange(s string) (AddrRange, error) {
	if first, last, isRange := strings.Cut(s, "-"); isRange {
		a, err := netip.ParseAddr(strings.TrimSpace(first))
		if err != nil || !a.Is4() {
			return AddrRange{}, fmt.Errorf("invalid range: %q is not an IPv4 address (write first-last, e.g. 192.168.100.10-192.168.100.20, or a CIDR)", first)
		}
		b, err := netip.ParseAddr(strings.TrimSpace(last))
		if err != nil || !b.Is4() {
			return AddrRange{}, fmt.Errorf("invalid range: %q is not an IPv4 address (write first-last, e.g. 192.168.100.10-192.168.100.20, or a CIDR)", last)
		}
		if a.Compare(b) > 0 {
			return AddrRange{}, fmt.Errorf("invalid range: %s comes after %s", a, b)
		}
		return AddrRange{First: a, Last: b}, nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return AddrRange{}, fmt.Errorf("invalid CIDR or range (write e.g. 192.168.100.0/28 or 192.168.100.10-192.168.100.20)")
	}
	if !p.Addr().Is4() {
		return AddrRange{}, fmt.Errorf("only IPv4 is supported")
	}
	if p != p.Masked() {
		return AddrRange{}, fmt.Errorf("not a network address (did you mean %s?)", p.Masked())
	}
	return RangeOf(p), nil
}

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func addr4(n uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// Broadcast is the last address of p's subnet (of an IPv6 prefix too,
// which has no broadcast address but a last one).
func Broadcast(p netip.Prefix) netip.Addr {
	if p.Addr().Is6() {
		a := p.Masked().Addr().As16()
		for i := p.Bits(); i < 128; i++ {
			a[i/8] |= 1 << (7 - i%8)
		}
		return netip.AddrFrom16(a)
	}
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= host
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}
