package netns

import (
	"fmt"
	"strings"

	"github.com/svclab/svclab/internal/labstore"
)

// committedButInterrupted is the error of a change interrupted (Ctrl-C,
// SIGTERM) after its objects were stored, while it waited for the
// proxies. The change is not rolled back: the store holds it, so `get
// pods` shows a deleted pod Terminating and a new pod Running, which is
// what the kernel has or is about to have. What follows the wait is left
// undone and the journal's commit stays, so the next command on the lab
// finishes it as it would after a kill at this point: it waits for the
// proxies, then sends SIGTERM to the terminating pods and removes the gone
// ones. SIGTERM is not sent now: a proxy that has not yet seen a pod
// terminating may still send it new connections.
func committedButInterrupted(cause error, cur, next *labstore.State, gone []string) error {
	var left []string
	if t := newlyTerminating(cur, next); len(t) > 0 {
		left = append(left, "pod "+strings.Join(t, ", ")+" still terminating")
	}
	if len(gone) > 0 {
		left = append(left, "pod "+strings.Join(gone, ", ")+" still to be removed")
	}
	what := ""
	if len(left) > 0 {
		what = ": " + strings.Join(left, "; ")
	}
	return fmt.Errorf("%w; the change is stored, and the next command on the lab finishes it%s", cause, what)
}
