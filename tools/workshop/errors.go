package workshop

import (
	"fmt"
	"strconv"
)

// Error is the one problem found in a lesson file.
type Error struct {
	// Source is the file (or the name given to Parse).
	Source string
	// Field is the field path, e.g. spec.steps[1].run[0].command; empty for
	// problems with the document as a whole.
	Field string
	// Value is the offending value as written; empty when there is none.
	Value string
	// Problem says what is wrong.
	Problem string
}

// Error renders `lesson <source>: <field> "<value>": <problem>`.
func (e *Error) Error() string {
	msg := "lesson"
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

func fieldErr(source, field, value, format string, args ...any) *Error {
	return &Error{Source: source, Field: field, Value: value, Problem: fmt.Sprintf(format, args...)}
}
