package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// useColor reports whether output to w gets ANSI colours: only when w is a
// terminal, and not when the NO_COLOR environment variable is set to a
// non-empty value (https://no-color.org), as the tours decide.
func useColor(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
