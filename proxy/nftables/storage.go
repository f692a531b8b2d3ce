package nftables

import (
	"strings"

	"sigs.k8s.io/knftables"
)

// elementStorage is what svclab knows one set or map of the table holds,
// and which services want which of its elements, so that a sync touches
// only the elements of the services that changed. Upstream:
// nftElementStorage (which instead re-ensures every element every sync).
//
// Two services may want the same key (a conflict, such as one external IP
// on two Services): the kernel then holds the value of the later service
// in the snapshot's order, as a render of every service in order would
// leave it.
type elementStorage struct {
	isSet bool
	name  string
	// elements is what the kernel holds: joined key → joined value.
	elements map[string]string
	// owners are the services wanting each key, with what they want.
	owners map[string][]elementOwner
	// touched are the keys whose owners changed since the last apply, in
	// the order they were first touched.
	touched     []string
	touchedKeys map[string]struct{}
}

// elementOwner is one service wanting an element.
type elementOwner struct {
	service serviceID
	element *knftables.Element
	value   string
}

func newElementStorage(isSet bool, name string) *elementStorage {
	return &elementStorage{isSet: isSet, name: name, elements: map[string]string{},
		owners: map[string][]elementOwner{}, touchedKeys: map[string]struct{}{}}
}

// joinSlice uses nft's own separator, so splitting back is unambiguous.
func joinSlice(k []string) string { return strings.Join(k, " . ") }

func splitSlice(k string) []string { return strings.Split(k, " . ") }

// reset takes over what the kernel holds (elems) and forgets every owner:
// a full render wants everything anew. When the kernel could not be read
// (unreadable), the container is flushed in tx and starts empty.
func (s *elementStorage) reset(tx *knftables.Transaction, elems []*knftables.Element, unreadable bool) {
	clear(s.elements)
	clear(s.owners)
	s.touched, s.touchedKeys = s.touched[:0], map[string]struct{}{}
	if unreadable {
		if s.isSet {
			tx.Flush(&knftables.Set{Name: s.name})
		} else {
			tx.Flush(&knftables.Map{Name: s.name})
		}
		return
	}
	for _, e := range elems {
		key := joinSlice(e.Key)
		s.elements[key] = joinSlice(e.Value)
		s.touch(key)
	}
}

func (s *elementStorage) touch(key string) {
	if _, ok := s.touchedKeys[key]; ok {
		return
	}
	s.touchedKeys[key] = struct{}{}
	s.touched = append(s.touched, key)
}

// want records that service wants elem (its last want of a key counts)
// and returns the element's key.
func (s *elementStorage) want(service serviceID, elem *knftables.Element) string {
	key := joinSlice(elem.Key)
	owner := elementOwner{service: service, element: elem, value: joinSlice(elem.Value)}
	owners := s.owners[key]
	for i := range owners {
		if owners[i].service == service {
			owners[i] = owner
			s.touch(key)
			return key
		}
	}
	s.owners[key] = append(owners, owner)
	s.touch(key)
	return key
}

// release records that service no longer wants key.
func (s *elementStorage) release(service serviceID, key string) {
	owners := s.owners[key]
	for i := range owners {
		if owners[i].service == service {
			owners = append(owners[:i], owners[i+1:]...)
			break
		}
	}
	if len(owners) == 0 {
		delete(s.owners, key)
	} else {
		s.owners[key] = owners
	}
	s.touch(key)
}

// apply adds to tx what makes the kernel hold, for every touched key, the
// value of its last owner (deleting a changed value first), or nothing
// when no service wants it any more.
func (s *elementStorage) apply(tx *knftables.Transaction) {
	for _, key := range s.touched {
		winner, wanted := s.lastOwner(key)
		existing, inKernel := s.elements[key]
		switch {
		case !wanted && inKernel:
			tx.Delete(s.element(key))
			delete(s.elements, key)
		case !wanted:
		case !inKernel:
			tx.Add(winner.element)
			s.elements[key] = winner.value
		case existing != winner.value:
			tx.Delete(winner.element)
			tx.Add(winner.element)
			s.elements[key] = winner.value
		}
	}
	s.touched = s.touched[:0]
	clear(s.touchedKeys)
}

// lastOwner is the owner of key latest in the snapshot's order.
func (s *elementStorage) lastOwner(key string) (elementOwner, bool) {
	owners := s.owners[key]
	if len(owners) == 0 {
		return elementOwner{}, false
	}
	last := owners[0]
	for _, o := range owners[1:] {
		if o.service.compare(last.service) > 0 {
			last = o
		}
	}
	return last, true
}

// element is a key-only element of this set or map (for deleting it).
func (s *elementStorage) element(key string) *knftables.Element {
	e := &knftables.Element{Key: splitSlice(key)}
	if s.isSet {
		e.Set = s.name
	} else {
		e.Map = s.name
	}
	return e
}
