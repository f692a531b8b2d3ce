package iptsave

import (
	"fmt"
	"strings"
)

// MaxSize bounds the text Scan and Parse read: 64 MiB, about twice a full
// iptables-restore payload for 10,000 services.
const MaxSize = 64 << 20

// Error is a failure at one line of a text.
type Error struct {
	// Line is the line's number, from 1: one past the last line when the
	// text ended inside a table.
	Line int
	Err  error
}

// Error gives the failure as "line N: what".
func (e *Error) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap gives the failure without its line.
func (e *Error) Unwrap() error { return e.Err }

// Scan reads text line by line (ParseLine) and checks the framing that
// iptables-save writes and iptables-restore reads: every chain declaration
// and command inside a *TABLE ... COMMIT section, sections not nested, the
// last one committed. It calls fn with every line that is not Blank, in
// order, numbered and with its section's Table set (the COMMIT line
// included). The first malformed line, or the first error fn returns,
// stops it and comes back as an *Error at that line.
func Scan(text string, fn func(Line) error) error {
	if len(text) > MaxSize {
		return fmt.Errorf("%d bytes: more than %d", len(text), MaxSize)
	}
	table, n := "", 0
	for rest := text; rest != ""; {
		var raw string
		raw, rest, _ = strings.Cut(rest, "\n")
		n++
		l, err := ParseLine(raw)
		if err != nil {
			return &Error{Line: n, Err: err}
		}
		if l.Kind == Blank {
			continue
		}
		l.Number = n
		if err := frame(&table, &l); err != nil {
			return &Error{Line: n, Err: err}
		}
		if err := fn(l); err != nil {
			return &Error{Line: n, Err: err}
		}
		if l.Kind == Commit {
			table = ""
		}
	}
	if table != "" {
		return &Error{Line: n + 1, Err: fmt.Errorf("table %s has no COMMIT", table)}
	}
	return nil
}

// frame checks that l may come where it does, *table being the open
// section ("" between sections), and sets l's Table. A table header opens
// its section; the caller closes it after a COMMIT.
func frame(table *string, l *Line) error {
	if l.Kind == TableHeader {
		if *table != "" {
			return fmt.Errorf("table %s begins before %s's COMMIT", l.Table, *table)
		}
		*table = l.Table
		return nil
	}
	if *table == "" {
		return fmt.Errorf("%s outside a table", l.Kind)
	}
	l.Table = *table
	return nil
}
