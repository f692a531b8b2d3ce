package netnslab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/scenarios/kit"
)

// Lab is a lab made for one scenario.
type Lab struct {
	*netns.Lab
	Binary string
	dir    string
}

// Options are the lab options of the scenarios: the svclab binary; the
// wait for proxies is the labs package's bound here (netns.TimeoutHere:
// minutes, four times as long inside svclab's VM).
func Options(binary string) netns.Options {
	return netns.Options{Binary: binary}
}

// NewLab creates a lab from a topology whose metadata.name is written as
// {{NAME}}; it is replaced by name.
func NewLab(ctx context.Context, name, topology, binary string) (*Lab, error) {
	dir, err := os.MkdirTemp("", "svclab-scenario-")
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(topology, "{{NAME}}", name)), 0o644); err != nil {
		return nil, err
	}
	l, _, err := netns.Create(ctx, file, Options(binary))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Lab{Lab: l, Binary: binary, dir: dir}, nil
}

// Delete removes the lab and its scratch files.
func (l *Lab) Delete() error {
	defer os.RemoveAll(l.dir)
	return netns.Delete(l.Name())
}

// Apply applies a manifest given as text.
func (l *Lab) Apply(ctx context.Context, manifest string) error {
	f, err := os.CreateTemp(l.dir, "manifest-*.yaml")
	if err != nil {
		return err
	}
	if _, err := f.WriteString(manifest); err != nil {
		return err
	}
	f.Close()
	return l.Lab.Apply(ctx, f.Name(), Options(l.Binary))
}

// Run runs a command in a host of the lab and returns its standard output.
func (l *Lab) Run(host string, args ...string) (string, error) {
	cmd, err := l.Command(host, args...)
	if err != nil {
		return "", err
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s in %s: %v: %s", strings.Join(args, " "), host, err, errOut.String())
	}
	return out.String(), nil
}

// Traffic makes n new connections from host to target with svclab traffic
// and returns every connection's outcome.
func (l *Lab) Traffic(host, target string, n int) (*traffic.Result, error) {
	// Generous bounds: they only matter on a slow machine (a lab in a TCG VM).
	o := traffic.Options{Target: target, Connections: n, Timeout: kit.ConnectionTimeout(), Deadline: kit.TrafficDeadline,
		Parallelism: kit.TrafficParallelism()}
	return l.Lab.Traffic(host, o, Options(l.Binary))
}
