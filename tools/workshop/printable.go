package workshop

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// printable is s with everything a terminal could take for a command
// rather than text replaced by U+FFFD: C0 controls (ESC starts the
// sequences that move the cursor, erase rows or write the clipboard with
// OSC 52; CR and BS overwrite a row; TAB shifts a table's columns), DEL, C1
// controls (U+0080–U+009F, among them the 8-bit CSI and OSC), invalid
// UTF-8, and Unicode's format characters (the bidi overrides and isolates
// U+202A–U+202E and U+2066–U+2069, U+200E/U+200F, U+061C, zero-width
// ones) — every rune strconv.IsPrint refuses but the ASCII space. Names
// from students' reports pass through it on their way to any output.
func printable(s string) string {
	if isPrintable(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // an invalid byte comes as utf8.RuneError
		if !strconv.IsPrint(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isPrintable reports whether printable(s) is s.
func isPrintable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
