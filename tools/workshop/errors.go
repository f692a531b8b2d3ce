package workshop

import "github.com/svclab/svclab/internal/strictyaml"

// Error is the one problem found in a lesson file: `lesson <source>:
// <field> "<value>": <problem>`.
type Error = strictyaml.Error

// lessonFile is the lesson file's format: its errors and its bound.
var lessonFile = strictyaml.Format{
	Prefix:   "lesson",
	Kind:     "Lesson",
	Noun:     "lesson file",
	MaxBytes: MaxFileBytes,
}

// fieldErr is the error for one field of the lesson at source.
func fieldErr(source, field, value, format string, args ...any) *Error {
	return lessonFile.FieldError(source, field, value, format, args...)
}
