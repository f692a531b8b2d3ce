package iptables

import (
	"net/netip"
	"strconv"
)

// lineBuf accumulates iptables-restore lines, words separated by single
// spaces, without fmt. Upstream: proxyutil.LineBuffer.
type lineBuf struct {
	b     []byte
	lines int
}

// word appends one argument, preceded by a space unless it starts the line.
func (l *lineBuf) word(s string) {
	if n := len(l.b); n > 0 && l.b[n-1] != '\n' {
		l.b = append(l.b, ' ')
	}
	l.b = append(l.b, s...)
}

func (l *lineBuf) words(ss ...string) {
	for _, s := range ss {
		l.word(s)
	}
}

// quoted appends "prefix+middle+suffix" in double quotes, as one argument.
func (l *lineBuf) quoted(prefix, middle, suffix string) {
	l.word(`"`)
	l.b = append(l.b, prefix...)
	l.b = append(l.b, middle...)
	l.b = append(l.b, suffix...)
	l.b = append(l.b, '"')
}

func (l *lineBuf) addr(a netip.Addr) {
	l.word("")
	l.b = a.AppendTo(l.b)
}

func (l *lineBuf) prefix(p netip.Prefix) {
	l.word("")
	l.b = p.AppendTo(l.b)
}

func (l *lineBuf) int(n int32) {
	l.word("")
	l.b = strconv.AppendInt(l.b, int64(n), 10)
}

// end finishes the current line.
func (l *lineBuf) end() {
	l.b = append(l.b, '\n')
	l.lines++
}

// line writes a whole line of plain words.
func (l *lineBuf) line(ss ...string) {
	l.words(ss...)
	l.end()
}

// chainLine declares chain the iptables-restore way: ":CHAIN - [0:0]". In a
// --noflush restore this creates the chain, or flushes it if it exists.
// Upstream: utiliptables.MakeChainLine.
func (l *lineBuf) chainLine(chain string) {
	l.b = append(l.b, ':')
	l.b = append(l.b, chain...)
	l.b = append(l.b, " - [0:0]\n"...)
	l.lines++
}

func (l *lineBuf) reset() {
	l.b = l.b[:0]
	l.lines = 0
}
