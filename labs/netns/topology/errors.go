package topology

import "github.com/svclab/svclab/internal/strictyaml"

// Error is one problem found in a lab file: `topology <source>: <field>
// "<value>": <problem>`. A file with several problems gives several,
// joined one per line (errors.Join; errors.As finds the first).
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
