package ui

import (
	"errors"
	"io"
)

// errTooMuch ends a command whose output is longer than its bound.
var errTooMuch = errors.New("output longer than its bound")

// limitedWriter passes at most n bytes to w, then fails.
type limitedWriter struct {
	w io.Writer
	n int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, errTooMuch
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
