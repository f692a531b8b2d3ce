package nftables

import (
	"strings"

	"sigs.k8s.io/knftables"
)

// elementStorage is what svclab knows one set or map of the table holds,
// so that a sync adds only missing elements and deletes only stale ones.
// Upstream: nftElementStorage.
type elementStorage struct {
	isSet    bool
	name     string
	elements map[string]string   // joined key → joined value
	leftover map[string]struct{} // keys not (yet) ensured in this sync
}

func newElementStorage(isSet bool, name string) *elementStorage {
	return &elementStorage{isSet: isSet, name: name, elements: map[string]string{}, leftover: map[string]struct{}{}}
}

// joinSlice uses nft's own separator, so splitting back is unambiguous.
func joinSlice(k []string) string { return strings.Join(k, " . ") }

func splitSlice(k string) []string { return strings.Split(k, " . ") }

// reset takes over what the kernel holds (elems). When the kernel could not
// be read (unreadable), the container is flushed in tx and starts empty.
func (s *elementStorage) reset(tx *knftables.Transaction, elems []*knftables.Element, unreadable bool) {
	clear(s.elements)
	defer s.resetLeftover()
	if unreadable {
		if s.isSet {
			tx.Flush(&knftables.Set{Name: s.name})
		} else {
			tx.Flush(&knftables.Map{Name: s.name})
		}
		return
	}
	for _, e := range elems {
		s.elements[joinSlice(e.Key)] = joinSlice(e.Value)
	}
}

func (s *elementStorage) resetLeftover() {
	clear(s.leftover)
	for k := range s.elements {
		s.leftover[k] = struct{}{}
	}
}

// ensure adds elem to tx unless it is there with the same value (a changed
// value is deleted and added again), and marks it as still wanted.
func (s *elementStorage) ensure(tx *knftables.Transaction, elem *knftables.Element) {
	key, value := joinSlice(elem.Key), joinSlice(elem.Value)
	existing, ok := s.elements[key]
	switch {
	case !ok:
		tx.Add(elem)
		s.elements[key] = value
	case existing != value:
		tx.Delete(elem)
		tx.Add(elem)
		s.elements[key] = value
	}
	delete(s.leftover, key)
}

// deleteLeftovers deletes the elements no ensure asked for since the last
// reset or deleteLeftovers.
func (s *elementStorage) deleteLeftovers(tx *knftables.Transaction) {
	for key := range s.leftover {
		e := &knftables.Element{Key: splitSlice(key)}
		if s.isSet {
			e.Set = s.name
		} else {
			e.Map = s.name
		}
		tx.Delete(e)
		delete(s.elements, key)
	}
	s.resetLeftover()
}
