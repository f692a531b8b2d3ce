package iptsave

import (
	"errors"
	"strings"
)

// Fields splits a rule's spec into its arguments the way iptables-restore
// does (add_param_to_argv in iptables' xshared.c): at blanks, a
// double-quoted part kept whole without its quotes, and inside quotes a
// backslash taking the next character as it is. A closing quote ends its
// argument. An unterminated quote is an error.
func Fields(spec string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg, quoted, escaped := false, false, false
	end := func() {
		args = append(args, cur.String())
		cur.Reset()
		inArg = false
	}
	for i := 0; i < len(spec); i++ {
		c := spec[i]
		switch {
		case escaped:
			cur.WriteByte(c)
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case quoted && c == '"':
			quoted = false
			end()
		case quoted:
			cur.WriteByte(c)
		case c == '"':
			quoted, inArg = true, true
		case c == ' ' || c == '\t':
			if inArg {
				end()
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if quoted {
		return nil, errors.New("unterminated quote")
	}
	if inArg {
		end()
	}
	return args, nil
}

// Join writes args as one spec that Fields splits back into them: an
// argument that is empty or holds a blank or a double quote is quoted, a
// backslash or double quote inside the quotes escaped, as iptables-save
// writes a comment (xtables_save_string).
func Join(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && !strings.ContainsAny(a, " \t\"") {
			b.WriteString(a)
			continue
		}
		b.WriteByte('"')
		for j := 0; j < len(a); j++ {
			if a[j] == '"' || a[j] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(a[j])
		}
		b.WriteByte('"')
	}
	return b.String()
}
