package strictyaml

import (
	"fmt"
	"strconv"
)

// Error is the one problem found in a file.
type Error struct {
	// Prefix names the format: `<Prefix> <source>: …` ("topology", "lesson").
	Prefix string
	// Source is the file (or the name given to the parser).
	Source string
	// Field is the field path, e.g. spec.nodes[1].podCIDR; empty for
	// problems with the document as a whole.
	Field string
	// Value is the offending value as written; empty when there is none.
	Value string
	// Problem says what is wrong.
	Problem string
}

// Error renders `<prefix> <source>: <field> "<value>": <problem>`.
func (e *Error) Error() string {
	msg := e.Prefix
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

// FieldError is the error for one field of the document at source.
func (f Format) FieldError(source, field, value, format string, args ...any) *Error {
	return &Error{Prefix: f.Prefix, Source: source, Field: field, Value: value, Problem: fmt.Sprintf(format, args...)}
}

// docError is an error about the document at source as a whole.
func (f Format) docError(source, problem string) *Error {
	return &Error{Prefix: f.Prefix, Source: source, Problem: problem}
}
