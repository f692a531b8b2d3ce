package iptablestest

import (
	"fmt"
	"strings"
)

// tokenize splits a rule line into arguments the way iptables-restore does:
// on spaces, with double-quoted strings kept whole (and unquoted).
func tokenize(line string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inQuote, inArg := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"':
			inQuote = !inQuote
			inArg = true
		case (c == ' ' || c == '\t') && !inQuote:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unterminated quote in %q", line)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}
