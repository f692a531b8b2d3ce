package dockerhost

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/svclab/svclab/labs/kind/cache"
	"github.com/svclab/svclab/labs/kind/cmdrun"
	"github.com/svclab/svclab/labs/kind/host"
)

// Ensure returns a running Docker daemon: svclab's own when it runs, else
// the user's (DOCKER_HOST or the default socket), else svclab's, started
// now (installing docker.io first when dockerd is missing). log gets one
// line for what it did; nil is quiet.
func Ensure(ctx context.Context, log io.Writer) (*Daemon, error) {
	if log == nil {
		log = io.Discard
	}
	if err := os.MkdirAll(RunDir, 0o755); err != nil {
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
	if _, err := exec.LookPath("dockerd"); err != nil {
		fmt.Fprintln(log, "dockerd is not installed: installing Debian's docker.io (services not started)")
		if err := installDocker(ctx); err != nil {
			return nil, fmt.Errorf("no Docker is running and it could not be installed: %w", err)
		}
	}
	if _, err := exec.LookPath("jq"); err != nil && host.Detect().NoCapSysResource {
		// the svclab-runc wrapper edits OCI specs with jq
		if err := cmdrun.Command("apt-get", "install", "-y", "-qq", "--no-install-recommends", "jq").WithEnv("DEBIAN_FRONTEND=noninteractive").Run(ctx); err != nil {
			return nil, fmt.Errorf("this host lacks CAP_SYS_RESOURCE, so containers run through svclab-runc, which needs jq: %w", err)
		}
	}
	if err := start(ctx); err != nil {
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

// installDocker installs docker.io with apt, its services kept from
// starting (a policy-rc.d that says no, unless one exists already).
func installDocker(ctx context.Context) error {
	const policy = "/usr/sbin/policy-rc.d"
	if _, err := os.Stat(policy); os.IsNotExist(err) {
		if err := os.WriteFile(policy, []byte("#!/bin/sh\n# svclab: installing docker.io without starting it\nexit 101\n"), 0o755); err != nil {
			return err
		}
		defer os.Remove(policy)
	}
	env := []string{"DEBIAN_FRONTEND=noninteractive"}
	if err := cmdrun.Command("apt-get", "install", "-y", "-qq", "--no-install-recommends", "docker.io", "jq").WithEnv(env...).Run(ctx); err != nil {
		if err := cmdrun.Command("apt-get", "update", "-qq").WithEnv(env...).Run(ctx); err != nil {
			return err
		}
		return cmdrun.Command("apt-get", "install", "-y", "-qq", "--no-install-recommends", "docker.io", "jq").WithEnv(env...).Run(ctx)
	}
	return nil
}
