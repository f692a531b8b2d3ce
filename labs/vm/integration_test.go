package vm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/roottest"
)

// prepareOnce installs the host packages and builds (or reuses) the image
// once for all integration tests of this package.
var prepareOnce struct {
	sync.Once
	err error
}

func requireVM(t *testing.T) {
	t.Helper()
	roottest.Require(t, "boots a VM with qemu")
	prepareOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		if _, err := EnsureHostPackages(ctx, os.Stderr, HostPackages...); err != nil {
			prepareOnce.err = err
			return
		}
		img, err := Prepare(ctx, PrepareOptions{Log: testLog{t}})
		if err != nil {
			prepareOnce.err = err
			return
		}
		t.Logf("image %s (built now: %v) ready in %s", filepath.Base(img.Dir), img.Built, img.Took.Round(time.Millisecond))
	})
	if prepareOnce.err != nil {
		t.Fatal(prepareOnce.err)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// runVM runs a command in the VM and returns its exit code, stdout and stderr.
func runVM(t *testing.T, opts Options) (int, string, string) {
	t.Helper()
	var stdout, stderr, console bytes.Buffer
	opts.Stdout, opts.Stderr, opts.Console, opts.Log = &stdout, &stderr, &console, testLog{t}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Minute
	}
	start := time.Now()
	code, err := Run(context.Background(), opts)
	t.Logf("%q: exit %d in %s", opts.Command, code, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("Run %q: %v", opts.Command, err)
	}
	return code, stdout.String(), stderr.String()
}

func TestIntegrationVMRunExitCodeAndStreams(t *testing.T) {
	requireVM(t)
	code, out, errOut := runVM(t, Options{Command: []string{"sh", "-c", "echo hi; echo oops >&2; exit 7"}})
	if code != 7 || out != "hi\n" || errOut != "oops\n" {
		t.Fatalf("got exit %d, stdout %q, stderr %q; want 7, \"hi\\n\", \"oops\\n\"", code, out, errOut)
	}
}
