package topology

import "errors"

// problems collects what is wrong with one lab, so that one run reports
// every mistake of a file, as kind's and the API server's validation do
// (kind's Cluster.Validate appends to errs and returns an aggregate). Each
// problem is an *Error naming the file and the field, one line when
// printed, and they come in the order of the file's fields.
//
// A field reports at most one problem, its first, and a check that needs a
// field with a problem is skipped: an unparsable spec.podSubnet is said
// once, not again by every podCIDR that cannot be inside it.
type problems struct {
	source string
	found  []error
	fields map[string]bool // fields with a problem

	// unparsed holds the problems of values convert could not parse,
	// until the checks reach their field (unparsedAt[field] indexes it;
	// nil once said).
	unparsed   []*Error
	unparsedAt map[string]int
}

// newProblems starts collecting the problems of the lab at source.
func newProblems(source string) *problems {
	return &problems{source: source, fields: map[string]bool{}, unparsedAt: map[string]int{}}
}

// add records the problem of field, unless it has one already; later
// checks of the field skip it.
func (p *problems) add(field, value, format string, args ...any) {
	if p.fields[field] {
		return
	}
	p.found = append(p.found, fieldErr(p.source, field, value, format, args...))
	p.fields[field] = true
}

// notParsed records that field's value did not parse (convert, which runs
// before the checks): the field has a problem from now on, said where the
// checks reach it (cantParse), so that the lines keep the file's order.
func (p *problems) notParsed(field, value, format string, args ...any) {
	if p.fields[field] {
		return
	}
	p.unparsedAt[field] = len(p.unparsed)
	p.unparsed = append(p.unparsed, fieldErr(p.source, field, value, format, args...))
	p.fields[field] = true
}

// cantParse says whether field's value did not parse, and says its
// problem now, in its turn.
func (p *problems) cantParse(field string) bool {
	i, ok := p.unparsedAt[field]
	if !ok {
		return false
	}
	if e := p.unparsed[i]; e != nil {
		p.found = append(p.found, e)
		p.unparsed[i] = nil
	}
	return true
}

// reported says whether field has a problem already.
func (p *problems) reported(field string) bool { return p.fields[field] }

// err is every problem, one per line (errors.Join: errors.As finds the
// first *Error), or nil when there is none. A value that did not parse in
// a field no check reached (the hosts of a lab with too many) comes last.
func (p *problems) err() error {
	all := p.found
	for _, e := range p.unparsed {
		if e != nil {
			all = append(all, e)
		}
	}
	return errors.Join(all...)
}
