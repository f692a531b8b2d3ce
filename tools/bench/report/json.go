package report

import (
	"encoding/json"
	"io"
)

// WriteJSON prints r as indented JSON (the fields of Result).
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
