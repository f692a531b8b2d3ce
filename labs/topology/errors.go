package topology

import (
	"fmt"
	"strconv"
)

// Error is the one problem found in a lab file.
type Error struct {
	// Source is the file (or the name given to Parse).
	Source string
	// Field is the field path, e.g. spec.nodes[1].podCIDR; empty for
	// problems with the document as a whole.
	Field string
	// Value is the offending value as written; empty when there is none.
	Value string
	// Problem says what is wrong.
	Problem string
}

// Error renders `topology <source>: <field> "<value>": <problem>`.
func (e *Error) Error() string {
	msg := "topology"
	if e.Source != "" {
		msg += " " + e.Source
	}
	msg += ":"
	if e.Field != "" {
		msg += " " + e.Field
	}
	if e.Value != "" {
		msg += " " + strconv.Quote(e.Value)
	}
	if e.Field != "" || e.Value != "" {
		msg += ":"
	}
	return msg + " " + e.Problem
}

// fieldErr is the error for one field of the lab at source.
func fieldErr(source, field, value, format string, args ...any) *Error {
	return &Error{Source: source, Field: field, Value: value, Problem: fmt.Sprintf(format, args...)}
}
