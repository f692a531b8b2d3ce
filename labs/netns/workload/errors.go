package workload

import "fmt"

// errorf prefixes a message with the manifest it is about.
func errorf(source, format string, args ...any) error {
	return fmt.Errorf("manifest %s: "+format, append([]any{source}, args...)...)
}
