package dockerhost

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/labs/kind/internal/cache"
	"github.com/svclab/svclab/labs/kind/internal/host"
)

// Ensure returns a running Docker daemon: svclab's own when it runs, else
// the user's (DOCKER_HOST or the default socket), else svclab's, started
// now (installing docker.io first when dockerd is missing). log gets one
// line for what it did; nil is quiet.
func Ensure(ctx context.Context, log io.Writer) (*Daemon, error) {
	if log == nil {
		log = io.Discard
	}
	if err := makeRunDir(RunDir); err != nil {
		return nil, err
	}
	unlock, err := cache.Lock(ctx, lockPath)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if running() && answers(ctx, Host) {
		return &Daemon{Host: Host, Managed: true, use: acquireUse()}, nil
	}
	if h := os.Getenv("DOCKER_HOST"); h != "" && h != Host {
		if answers(ctx, h) {
			return &Daemon{Host: h}, nil
		}
		return nil, fmt.Errorf("DOCKER_HOST=%s does not answer (docker version failed); unset it to let svclab run its own dockerd", h)
	}
	if answers(ctx, "") {
		return &Daemon{}, nil // the user's Docker
	}
	// svclab's own dockerd: installed (docker.io, its services not
	// started) when missing, with jq for the svclab-runc wrapper, which
	// edits OCI specs on hosts without CAP_SYS_RESOURCE.
	progs := []string{hostprog.Dockerd, hostprog.Docker, hostprog.NSEnter, hostprog.IP}
	if host.Detect().NoCapSysResource {
		progs = append(progs, hostprog.JQ)
	}
	if err := hostprog.Ensure(ctx, log, progs...); err != nil {
		return nil, fmt.Errorf("no Docker is running and svclab's cannot start: %w", err)
	}
	if err := start(ctx, log); err != nil {
		// leave nothing behind: the namespace, a half-started daemon
		stopErr := stop(ctx, io.Discard)
		if stopErr != nil {
			return nil, fmt.Errorf("%w (cleaning up: %v)", err, stopErr)
		}
		return nil, err
	}
	fmt.Fprintf(log, "started svclab's dockerd in network namespace %s (DOCKER_HOST=%s)\n", Namespace, Host)
	return &Daemon{Host: Host, Managed: true, use: acquireUse()}, nil
}
