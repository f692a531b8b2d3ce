package config

import (
	"strconv"
	"strings"
)

// Error is one problem with a configuration document. Its message names the
// document, the field and the value, so a reader can find the line to fix:
//
//	kube-system/kube-proxy config.conf: iptables.masqueradeBit "40": must be within the range [0, 31]
type Error struct {
	// Source names the document: "kube-system/kube-proxy config.conf" for a
	// ConfigMap, or whatever the caller passed to Parse (a file path).
	Source string
	// Field is the field's path as written in YAML ("iptables.syncPeriod");
	// empty for problems with the whole document (malformed YAML).
	Field string
	// Value is the offending value as written; empty when there is none to show.
	Value string
	// Reason says what is wrong.
	Reason string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		if e.Value != "" {
			b.WriteString(" ")
			b.WriteString(strconv.Quote(e.Value))
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}
