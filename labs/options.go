package labs

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/svclab/svclab/labs/process"
)

// Options are what every lab operation needs from its caller.
type Options struct {
	// Binary is the svclab executable started inside the lab's namespaces
	// (the proxies and the pods' servers). Default: this executable.
	Binary string
	// Out receives progress lines (default: discarded).
	Out io.Writer
	// Timeout bounds how long an operation waits for proxies and servers.
	Timeout time.Duration
	// RestartBackoff is the supervisors' restart back-off for the processes
	// started (zero fields: the kubelet's 10 s, 5 min, 10 min); tests
	// shorten it.
	RestartBackoff process.Backoff
}

func (o Options) withDefaults() (Options, error) {
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("locate the svclab binary: %w", err)
		}
		o.Binary = exe
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second // a bound, not a wait: a lab in a TCG VM needs many seconds
	}
	return o, nil
}
