package netns

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
)

// Traffic runs `svclab traffic --raw` inside a host of the lab and returns
// every connection's outcome. Sockets belong to the network namespace of
// the thread that opens them; a process of its own in the host's namespace
// is the simple and safe way to get that for many parallel connections.
func (l *Lab) Traffic(host string, o traffic.Options, opts Options) (*traffic.Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	cmd, err := l.Command(host, selfexec.Argv(opts.Binary, &selfexec.Traffic{Options: o, Raw: true})...)
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("traffic from %s to %s: %v: %s", host, o.Target, err, bytes.TrimSpace(errOut.Bytes()))
	}
	var res traffic.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("traffic from %s: reading its result: %w", host, err)
	}
	return &res, nil
}
