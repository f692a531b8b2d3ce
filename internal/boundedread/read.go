package boundedread

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// TooLargeError says that an input holds more than Limit bytes.
type TooLargeError struct {
	// What names the input (usually its path).
	What  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s, the limit for this input", e.What, Size(e.Limit))
}

// IsTooLarge reports whether err is (or wraps) a *TooLargeError.
func IsTooLarge(err error) bool {
	var t *TooLargeError
	return errors.As(err, &t)
}

// All reads r to its end, or fails with a *TooLargeError as soon as more
// than limit bytes have come (it reads at most limit+1 bytes). what names
// the input in the error.
func All(r io.Reader, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{What: what, Limit: limit}
	}
	return data, nil
}

// ReadFile is os.ReadFile with a limit: a file (or device, or pipe) that
// gives more than limit bytes is a *TooLargeError naming path, found after
// reading limit+1 bytes at most.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, &TooLargeError{What: path, Limit: limit}
	}
	return All(f, limit, path)
}

// Size renders a byte count the way limits are written: 4 MiB, 512 KiB, 100 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
