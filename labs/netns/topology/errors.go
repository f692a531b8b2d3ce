package topology

import "github.com/svclab/svclab/internal/strictyaml"

// Error is the one problem found in a lab file: `topology <source>: <field>
// "<value>": <problem>`.
type Error = strictyaml.Error

// labFile is the lab file's format: its errors and its bound.
var labFile = strictyaml.Format{
	Prefix:             "topology",
	Kind:               "Lab",
	Noun:               "lab file",
	SecondDocumentHint: " (write one file per lab)",
	MaxBytes:           MaxFileBytes,
}

// fieldErr is the error for one field of the lab at source.
func fieldErr(source, field, value, format string, args ...any) *Error {
	return labFile.FieldError(source, field, value, format, args...)
}
