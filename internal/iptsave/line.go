package iptsave

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kind says what one line of iptables-save or iptables-restore text is.
type Kind int

const (
	// Blank is an empty line or a # comment; ParseLine gives nothing else
	// for it.
	Blank Kind = iota
	// TableHeader starts a table's section: "*nat".
	TableHeader
	// ChainDeclaration declares a chain: ":KUBE-SERVICES - [0:0]".
	ChainDeclaration
	// Command is a rule or another iptables-restore command:
	// "[3:180] -A KUBE-SERVICES -j RETURN", "-X KUBE-SEP-...".
	Command
	// Commit ends a table's section: "COMMIT".
	Commit
)

// String names the kind as the documentation does.
func (k Kind) String() string {
	switch k {
	case Blank:
		return "blank"
	case TableHeader:
		return "table header"
	case ChainDeclaration:
		return "chain declaration"
	case Command:
		return "command"
	case Commit:
		return "COMMIT"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Counters are a rule's or a built-in chain policy's packet and byte
// counts, written [PACKETS:BYTES].
type Counters struct {
	Packets, Bytes uint64
}

// Line is one line of iptables-save or iptables-restore text.
type Line struct {
	// Number is the line's number in its text, from 1 (Scan sets it;
	// ParseLine leaves it 0).
	Number int
	Kind   Kind
	// Table is the table a TableHeader starts; Scan also sets it on the
	// lines inside the section.
	Table string
	// Chain is the chain a ChainDeclaration declares or a Command names
	// ("" for a command without one, such as a bare -F).
	Chain string
	// Policy is a ChainDeclaration's policy: ACCEPT or DROP for a built-in
	// chain, "-" for a user chain.
	Policy string
	// Counters are the line's [PACKETS:BYTES], when HasCounters. A chain
	// declaration's are its policy's; a command's are its rule's.
	Counters    Counters
	HasCounters bool
	// Op is a Command's option as written: "-A", "-I", "--append", "-X"...
	Op string
	// Spec is the rest of a Command after its chain, as written (quotes
	// and all): the rule's matches and target. Fields splits it.
	Spec string
}

// ParseLine reads one line (without its newline; a trailing \r and
// surrounding blanks are ignored). It checks the line's own syntax only: a
// command's option and spec are not interpreted.
func ParseLine(text string) (Line, error) {
	s := strings.TrimSpace(text)
	switch {
	case s == "" || s[0] == '#':
		return Line{Kind: Blank}, nil
	case s == "COMMIT":
		return Line{Kind: Commit}, nil
	case s[0] == '*':
		return parseTableHeader(s)
	case s[0] == ':':
		return parseChainDeclaration(s)
	case s[0] == '[' || s[0] == '-':
		return parseCommand(s)
	}
	return Line{}, fmt.Errorf("%q: want *TABLE, :CHAIN POLICY [PACKETS:BYTES], [PACKETS:BYTES] -A CHAIN …, COMMIT or a # comment", clip(s))
}

// parseTableHeader reads "*TABLE".
func parseTableHeader(s string) (Line, error) {
	name := strings.TrimSpace(s[1:])
	if name == "" || strings.ContainsAny(name, " \t") {
		return Line{}, fmt.Errorf("table header %q: want *TABLE", clip(s))
	}
	return Line{Kind: TableHeader, Table: name}, nil
}

// parseChainDeclaration reads ":NAME POLICY [PACKETS:BYTES]"; the counters
// are optional, as iptables-restore takes them.
func parseChainDeclaration(s string) (Line, error) {
	f := strings.Fields(s[1:])
	if len(f) < 2 || len(f) > 3 {
		return Line{}, fmt.Errorf("chain declaration %q: want :NAME POLICY [PACKETS:BYTES]", clip(s))
	}
	l := Line{Kind: ChainDeclaration, Chain: f[0], Policy: f[1]}
	if len(f) == 3 {
		c, err := parseCounters(f[2])
		if err != nil {
			return Line{}, fmt.Errorf("chain %s: %w", clip(f[0]), err)
		}
		l.Counters, l.HasCounters = c, true
	}
	return l, nil
}

// parseCommand reads "[PACKETS:BYTES] -A CHAIN spec", the counters
// optional.
func parseCommand(s string) (Line, error) {
	l := Line{Kind: Command}
	rest := s
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return Line{}, fmt.Errorf("%q: want [PACKETS:BYTES] -A CHAIN …", clip(s))
		}
		c, err := parseCounters(s[:end+1])
		if err != nil {
			return Line{}, err
		}
		l.Counters, l.HasCounters = c, true
		rest = strings.TrimLeft(s[end+1:], " \t")
	}
	if !strings.HasPrefix(rest, "-") {
		return Line{}, fmt.Errorf("%q: want [PACKETS:BYTES] -A CHAIN …", clip(s))
	}
	l.Op, rest = cutField(rest)
	l.Chain, l.Spec = cutField(rest)
	return l, nil
}

// cutField splits s at its first run of blanks: the first field and what
// follows it, both without the blanks between.
func cutField(s string) (field, rest string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}

// errCountersSyntax is the message of every malformed counter.
var errCountersSyntax = errors.New("want [PACKETS:BYTES]")

// parseCounters reads "[PACKETS:BYTES]", both decimal.
func parseCounters(s string) (Counters, error) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return Counters{}, fmt.Errorf("counters %q: %w", clip(s), errCountersSyntax)
	}
	ps, bs, ok := strings.Cut(s[1:len(s)-1], ":")
	if !ok {
		return Counters{}, fmt.Errorf("counters %q: %w", clip(s), errCountersSyntax)
	}
	p, err := strconv.ParseUint(ps, 10, 64)
	if err != nil {
		return Counters{}, fmt.Errorf("counters %q: packets: %w", clip(s), numError(err))
	}
	b, err := strconv.ParseUint(bs, 10, 64)
	if err != nil {
		return Counters{}, fmt.Errorf("counters %q: bytes: %w", clip(s), numError(err))
	}
	return Counters{Packets: p, Bytes: b}, nil
}

// numError drops strconv's repetition of the input.
func numError(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err
	}
	return err
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
