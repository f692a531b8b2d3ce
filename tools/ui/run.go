package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// errTooMuch ends a command whose output is longer than its bound.
var errTooMuch = errors.New("output longer than its bound")

// limitedWriter passes at most n bytes to w, then fails.
type limitedWriter struct {
	w io.Writer
	n int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, errTooMuch
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}

// runBounded runs cmd (as made by Lab.Command) with a timeout and a bound
// on its output, and returns its standard output.
func runBounded(ctx context.Context, cmd *exec.Cmd, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, n: maxKernelOutput}
	cmd.Stderr = &limitedWriter{w: &errOut, n: 4096}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, kernelReadTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, bytes.TrimSpace(errOut.Bytes()))
	}
	return out.Bytes(), nil
}
