package topology

import "net/netip"

// A declared is a prefix and the field that declared it.
type declared struct {
	prefix netip.Prefix
	field  string
}

// prefixSet holds pairwise disjoint IPv4 prefixes and finds the one a new
// prefix overlaps in at most 33 map lookups: two prefixes overlap exactly
// when one contains the other, so it looks for an inserted prefix among the
// new one's ancestors (and itself), then for the new one among the
// ancestors of inserted prefixes. Answers are those of a scan in
// declaration order: the containing prefix is unique (the set is
// disjoint), and below records the first prefix declared under each
// ancestor.
type prefixSet struct {
	exact map[netip.Prefix]declared
	below map[netip.Prefix]declared
}

// newPrefixSet returns an empty set sized for n prefixes.
func newPrefixSet(n int) *prefixSet {
	return &prefixSet{exact: make(map[netip.Prefix]declared, n), below: make(map[netip.Prefix]declared, 2*n)}
}

// overlap returns the inserted prefix that p overlaps, if any. Walking
// down p's ancestors it stops at the first one with nothing inserted below
// it: no inserted prefix can lie further down that path.
func (s *prefixSet) overlap(p netip.Prefix) (declared, bool) {
	for bits := 0; bits <= p.Bits(); bits++ {
		a := netip.PrefixFrom(p.Addr(), bits).Masked()
		if d, ok := s.exact[a]; ok {
			return d, true
		}
		if _, more := s.below[a]; !more {
			return declared{}, false
		}
	}
	d, ok := s.below[p.Masked()]
	return d, ok
}

// add inserts p, which must overlap nothing in s. It records p under its
// ancestors from the nearest up, and stops at the first one already
// recorded (every ancestor of that one is recorded too, with an earlier
// prefix).
func (s *prefixSet) add(p netip.Prefix, field string) {
	d := declared{p.Masked(), field}
	s.exact[d.prefix] = d
	for bits := p.Bits() - 1; bits >= 0; bits-- {
		a := netip.PrefixFrom(p.Addr(), bits).Masked()
		if _, seen := s.below[a]; seen {
			return
		}
		s.below[a] = d
	}
}
