package netns

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/svclab/svclab/labs/agents/process"
)

// Options are what every lab operation needs from its caller.
type Options struct {
	// Binary is the svclab executable started inside the lab's namespaces
	// (the proxies and the pods' servers). Default: this executable.
	Binary string
	// Out receives progress lines (default: discarded).
	Out io.Writer
	// Timeout bounds how long an operation waits for proxies and servers
	// (default DefaultTimeout).
	Timeout time.Duration
	// RestartBackoff is the supervisors' restart back-off for the processes
	// started (zero fields: the kubelet's 10 s, 5 min, 10 min); tests
	// shorten it.
	RestartBackoff process.Backoff
	// Times, when set, receives how long each step of a change of the
	// lab's objects took (ChangeTimes; svclab bench apply).
	Times *ChangeTimes
}

// DefaultTimeout bounds how long a lab operation waits for its proxies to
// program a change and for its servers to start. It is a bound, not a
// wait: a failing proxy is reported at once (it crash-loops, or two syncs
// in a row failed), and a lab on a host kernel takes well under a second.
// But a lab in svclab's VM runs under TCG, where every program a proxy
// runs (nft, iptables, ipset) costs a tenth of a second or more and a
// proxy's first full sync 6–8 s even on an idle host. With two VMs at once
// on the 2-core host, a restart into nftables mode took 47 s here, and in
// CI's run it went past the former bound of a minute.
const DefaultTimeout = 3 * time.Minute

// vmTimeoutFactor multiplies DefaultTimeout inside svclab's VM
// ($SVCLAB_VM=1): on a slow 2-core host, with the VM suites beside the
// rest of make test, a lesson's switch into nftables mode there went past
// the 3 minutes while its proxy was still starting.
const vmTimeoutFactor = 4

// defaultTimeout is DefaultTimeout, vmTimeoutFactor times it in the VM.
func defaultTimeout(inVM bool) time.Duration {
	if inVM {
		return vmTimeoutFactor * DefaultTimeout
	}
	return DefaultTimeout
}

// TimeoutHere is the bound a lab operation takes when Options.Timeout is
// zero, here: DefaultTimeout, four times it inside svclab's VM.
func TimeoutHere() time.Duration { return defaultTimeout(os.Getenv("SVCLAB_VM") == "1") }

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
		o.Timeout = TimeoutHere()
	}
	return o, nil
}
