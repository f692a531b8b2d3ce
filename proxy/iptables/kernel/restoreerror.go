package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// PayloadLine is one numbered line of a payload (the first line is 1).
type PayloadLine struct {
	Number int
	Text   string
}

// RestoreError is a payload that iptables-restore refused.
type RestoreError struct {
	// Command is the restore binary, e.g. "iptables-nft-restore".
	Command string
	// Output is what it printed.
	Output string
	// Line is the payload line it blamed, 0 when its output named none.
	// nf_tables reports some errors (such as a jump to a missing chain) at
	// the COMMIT line of the table rather than at the rule.
	Line int
	// Context is the blamed line with up to two lines either side.
	Context []PayloadLine
	// Err is the underlying error (usually an *exec.ExitError).
	Err error
}

func (e *RestoreError) Error() string {
	msg := strings.TrimSpace(firstLine(e.Output))
	if e.Line > 0 {
		return fmt.Sprintf("%s rejected payload line %d %q: %s", e.Command, e.Line, e.OffendingLine(), msg)
	}
	return fmt.Sprintf("%s rejected payload: %s", e.Command, msg)
}

func (e *RestoreError) Unwrap() error { return e.Err }

// OffendingLine is the text of the blamed payload line, "" when unknown.
func (e *RestoreError) OffendingLine() string {
	for _, l := range e.Context {
		if l.Number == e.Line {
			return l.Text
		}
	}
	return ""
}

// IsRestoreError reports whether err is (or wraps) a *RestoreError.
func IsRestoreError(err error) bool {
	var re *RestoreError
	return errors.As(err, &re)
}

// Formats in which iptables-restore names the failing line:
//
//	Error occurred at line: 3                 (parse errors, both backends)
//	iptables-restore: line 2 failed           (legacy; nft appends ": reason")
//	iptables-restore: COMMIT expected at line 4
//
// Upstream parses only the second (parseRestoreError in
// pkg/util/iptables/iptables.go).
var restoreLinePatterns = []*regexp.Regexp{
	regexp.MustCompile(`Error occurred at line: (\d+)`),
	regexp.MustCompile(`line (\d+) failed`),
	regexp.MustCompile(`COMMIT expected at line (\d+)`),
}

// NewRestoreError builds the error for a failed restore of payload, finding
// the blamed line in output.
func NewRestoreError(command string, output, payload []byte, err error) *RestoreError {
	e := &RestoreError{Command: command, Output: string(output), Err: err}
	for _, re := range restoreLinePatterns {
		if m := re.FindSubmatch(output); m != nil {
			if n, convErr := strconv.Atoi(string(m[1])); convErr == nil {
				e.Line = n
				break
			}
		}
	}
	if e.Line > 0 {
		e.Context = ExtractLines(payload, e.Line, 2)
	}
	return e
}

// ExtractLines returns line number `line` of data with up to `around` lines
// on either side. Upstream: utiliptables.ExtractLines.
func ExtractLines(data []byte, line, around int) []PayloadLine {
	if line < 1 {
		return nil
	}
	var out []PayloadLine
	n := 0
	for len(data) > 0 {
		n++
		text := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			text, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if n > line+around {
			break
		}
		if n >= line-around {
			out = append(out, PayloadLine{Number: n, Text: string(text)})
		}
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
