package process

import (
	"os"
	"strings"
)

// LogTail returns the last n lines of a process's log file ("" when it
// cannot be read), for error messages that say why a process failed.
func LogTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
