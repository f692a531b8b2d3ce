package kubelet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nsthread"
)

// Reply is a kubelet's answer to a sync.
type Reply struct {
	// Failed are the pods whose server did not start, with why.
	Failed map[string]string `json:"failed,omitempty"`
	// Error says why the request was refused.
	Error string `json:"error,omitempty"`
}

// maxReply bounds a reply read from a kubelet.
const maxReply = 1 << 20

// Sync asks the kubelet in the node's network namespace nodeNS to sync (see
// Kubelet.Sync) and returns its reply once it has.
func Sync(ctx context.Context, nodeNS string) (Reply, error) {
	conn, err := dial(nodeNS)
	if err != nil {
		return Reply{}, err
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d) //nolint:errcheck // the read below fails when it passes
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) }) //nolint:errcheck // ends the read below
	defer stop()
	if _, err := io.WriteString(conn, "sync\n"); err != nil {
		return Reply{}, fmt.Errorf("kubelet in %s: %w", nodeNS, err)
	}
	var r Reply
	if err := json.NewDecoder(io.LimitReader(conn, maxReply)).Decode(&r); err != nil {
		return Reply{}, fmt.Errorf("kubelet in %s: %w", nodeNS, errors.Join(ctx.Err(), err))
	}
	if r.Error != "" {
		return r, fmt.Errorf("kubelet in %s: %s", nodeNS, r.Error)
	}
	return r, nil
}

// dial connects to the kubelet's socket from a thread in its namespace (the
// connection, once made, is used from any thread).
func dial(nodeNS string) (net.Conn, error) {
	target, err := netns.GetFromName(nodeNS)
	if err != nil {
		return nil, fmt.Errorf("kubelet in %s: %w", nodeNS, err)
	}
	defer target.Close()
	var conn net.Conn
	err = nsthread.Do(nodeNS, target, func() error {
		c, err := net.Dial("unix", SocketName)
		conn = c
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kubelet in %s: %w", nodeNS, err)
	}
	return conn, nil
}
