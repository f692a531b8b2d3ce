package process

import (
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// FollowInterval is how often WriteLog looks for new output when it
// follows a log.
const FollowInterval = 200 * time.Millisecond

// tailBlock is how much WriteLog reads at a time, from the end, to find
// the last lines.
const tailBlock = 64 << 10

// WriteLog copies a process's log file to w, as `kubectl logs` does: all
// of it (tail < 0) or its last tail lines; with follow, it then keeps
// copying what the process appends until ctx ends (which is no error). A
// file that shrinks (replaced or truncated) is read again from its start.
func WriteLog(ctx context.Context, path string, w io.Writer, tail int, follow bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	start, err := tailOffset(f, tail)
	if err != nil {
		return err
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return err
	}
	off := start
	for {
		n, err := io.Copy(w, f)
		off += n
		if err != nil {
			return err
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(FollowInterval):
		}
		if fi, err := os.Stat(path); err == nil && fi.Size() < off {
			if f2, err := os.Open(path); err == nil {
				f.Close()
				f, off = f2, 0
			}
		}
	}
}

// tailOffset is where the last tail lines of f start (0 for all, tail < 0).
// A last line without its newline counts as a line.
func tailOffset(f *os.File, tail int) (int64, error) {
	if tail < 0 {
		return 0, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	end := fi.Size()
	if end == 0 || tail == 0 {
		return end, nil
	}
	// Skip a final newline: it ends the last line, it does not start one.
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, end-1); err != nil {
		return 0, err
	}
	pos := end
	if last[0] == '\n' {
		pos--
	}
	newlines := 0
	buf := make([]byte, tailBlock)
	for pos > 0 {
		n := int64(len(buf))
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := n - 1; i >= 0; i-- {
			if buf[i] != '\n' {
				continue
			}
			if newlines++; newlines == tail {
				return pos + i + 1, nil
			}
		}
	}
	return 0, nil
}
