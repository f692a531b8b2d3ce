package graph

import (
	"fmt"
	"io"
	"strings"
)

// Format is an output format of Render.
type Format string

const (
	FormatSVG     Format = "svg"
	FormatDOT     Format = "dot"
	FormatMermaid Format = "mermaid"
)

// Formats lists the formats Render knows, for help and shell completion.
func Formats() []string { return []string{string(FormatSVG), string(FormatDOT), string(FormatMermaid)} }

// ParseFormat checks a format named by a user.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if s == f {
			return Format(s), nil
		}
	}
	return "", fmt.Errorf("unknown output format %q (one of: %s)", s, strings.Join(Formats(), ", "))
}

// Render writes g in format f.
func Render(w io.Writer, g *Graph, f Format) error {
	switch f {
	case FormatSVG:
		return WriteSVG(w, g)
	case FormatDOT:
		return WriteDOT(w, g)
	case FormatMermaid:
		return WriteMermaid(w, g)
	}
	_, err := ParseFormat(string(f))
	return err
}
