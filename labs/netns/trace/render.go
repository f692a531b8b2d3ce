package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Format is an output format of svclab trace.
type Format string

const (
	FormatText Format = "text"
	FormatJSON Format = "json"
	FormatSVG  Format = "svg"
)

// Formats lists the output formats.
func Formats() []string { return []string{string(FormatText), string(FormatJSON), string(FormatSVG)} }

// ParseFormat accepts text, json and svg.
func ParseFormat(s string) (Format, error) {
	if slices.Contains(Formats(), s) {
		return Format(s), nil
	}
	return "", fmt.Errorf("format %q: want one of %s", s, strings.Join(Formats(), ", "))
}

// Render writes r in format f.
func Render(w io.Writer, r *Result, f Format) error {
	switch f {
	case FormatJSON:
		return WriteJSON(w, r)
	case FormatSVG:
		return WriteSVG(w, r)
	default:
		return WriteText(w, r)
	}
}

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
